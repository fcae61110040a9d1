/*
 * The I/O floor for roster's store reads, shared by list.c and prune.c: what a careful C
 * program must do for one record (open it without following links and without blocking,
 * check it on the handle, read it, close it) and for one pid (read /proc/<pid>/stat).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_RECORD 65536

/* A record name: 1 to 10 digits, no leading zero, then ".json". The pid, or 0. */
static long record_pid(const char *name) {
  long pid = 0;
  int digits = 0;
  if (name[0] < '1' || name[0] > '9') return 0;
  while (name[digits] >= '0' && name[digits] <= '9') pid = pid * 10 + (name[digits++] - '0');
  if (digits > 10 || strcmp(name + digits, ".json") != 0) return 0;
  return pid;
}

/* Reads one record under dirfd into buf (NUL-terminated); its length, or -1. */
static ssize_t read_record(int dirfd, const char *name, char *buf, uid_t uid) {
  int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  ssize_t n = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == uid &&
      (st.st_mode & 022) == 0 && st.st_size <= MAX_RECORD) {
    n = read(fd, buf, MAX_RECORD);
    if (n >= 0) buf[n] = 0;
  }
  close(fd);
  return n;
}

/* The string value of "key" in a record, copied to out; 0 when absent or null. */
static int string_field(const char *text, const char *key, char *out, size_t size) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\":", key);
  const char *p = strstr(text, pattern);
  if (!p) return 0;
  p += strlen(pattern);
  while (*p == ' ') p++;
  if (*p != '"') return 0;
  const char *end = strchr(++p, '"');
  if (!end || (size_t)(end - p) >= size) return 0;
  memcpy(out, p, end - p);
  out[end - p] = 0;
  return 1;
}

/* 1 alive (the start token is /proc/<pid>/stat's field 22, starttime), 0 dead (gone, zombie or
 * another start token). */
static int alive(const char *proc, long pid, const char *token) {
  char path[64], stat[1024];
  snprintf(path, sizeof path, "%s/%ld/stat", proc, pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, stat, sizeof stat - 1);
  close(fd);
  if (n <= 0) return 0;
  stat[n] = 0;
  char *p = strrchr(stat, ')');
  if (!p || p[1] != ' ') return 0;
  char state = p[2];
  /* Zombie, or dead (X, and x on Linux 2.6.33 to 3.13): as roster's isDeadState. */
  if (state == 'Z' || state == 'X' || state == 'x') return 0;
  /* Field 3 (the state) starts at p + 2, and each space ends a field: after the loop, q is
   * the start of field 22, starttime. (Counting spaces from the ')' instead, as this loop once
   * did, lands one field early, on itrealvalue, and calls every live process dead.) */
  const char *q = p + 2;
  for (int field = 3; field < 22 && q; field++) {
    q = strchr(q, ' ');
    if (q) q++;
  }
  if (!q) return 0;
  size_t len = strcspn(q, " ");
  return strlen(token) == len && strncmp(q, token, len) == 0;
}
