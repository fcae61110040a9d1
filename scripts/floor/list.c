/*
 * The floor for `roster list --all --json`: every record of one host directory read as roster
 * reads it, its pid probed in /proc, and the record written out with its liveness.
 * Usage: list <host-dir> [proc-root]
 */
#include "floor.h"

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  const char *proc = argc > 2 ? argv[2] : "/proc";
  DIR *dir = opendir(argv[1]);
  if (!dir) return 1;
  static char buf[MAX_RECORD + 1];
  char token[300];
  uid_t uid = getuid();
  struct dirent *e;
  fputs("[\n", stdout);
  while ((e = readdir(dir)) != NULL) {
    long pid = record_pid(e->d_name);
    if (pid == 0) continue;
    ssize_t n = read_record(dirfd(dir), e->d_name, buf, uid);
    if (n < 0) continue;
    int live = string_field(buf, "start_token", token, sizeof token) && alive(proc, pid, token);
    fwrite(buf, 1, n, stdout);
    printf("\"liveness\": \"%s\", \"path\": \"%s/%s\"\n", live ? "alive" : "dead", argv[1],
           e->d_name);
  }
  fputs("]\n", stdout);
  closedir(dir);
  return 0;
}
