/*
 * The floor for `roster prune`: under the host directory's lock, every record read as roster
 * reads it, its pid probed in /proc, and the dead ones removed and named on stdout.
 * Usage: prune <host-dir> [proc-root]
 */
#include "floor.h"
#include <sys/file.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  const char *proc = argc > 2 ? argv[2] : "/proc";
  DIR *dir = opendir(argv[1]);
  if (!dir) return 1;
  int lock = openat(dirfd(dir), ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (lock < 0 || flock(lock, LOCK_EX) != 0) return 1;
  static char buf[MAX_RECORD + 1];
  char token[300];
  uid_t uid = getuid();
  long removed = 0, kept = 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    long pid = record_pid(e->d_name);
    if (pid == 0) continue;
    if (read_record(dirfd(dir), e->d_name, buf, uid) < 0) continue;
    if (string_field(buf, "start_token", token, sizeof token) && alive(proc, pid, token)) {
      kept++;
    } else if (unlinkat(dirfd(dir), e->d_name, 0) == 0) {
      removed++;
      printf("  %ld  dead  %s/%s\n", pid, argv[1], e->d_name);
    }
  }
  printf("Removed %ld records; kept %ld.\n", removed, kept);
  close(lock);
  closedir(dir);
  return 0;
}
