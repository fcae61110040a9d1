/*
 * Live processes for the benchmark's "alive" records: forks N children that sleep until
 * killed, prints their pids one a line, and waits. The children die with this process
 * (PR_SET_PDEATHSIG), so killing it ends them all. A fork costs far less than bash starting
 * `sleep` N times, which took minutes for 5,000 on a busy machine.
 * Usage: sleepers N
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  int n = atoi(argv[1]);
  pid_t parent = getpid();
  for (int i = 0; i < n; i++) {
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(0);
      for (;;) pause();
    }
    printf("%d\n", pid);
  }
  fflush(stdout);
  for (;;) pause();
}
