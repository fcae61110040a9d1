/*
 * The benchmark's stopwatch: runs a command with its stdout sent to /dev/null, then prints
 * "<wall us> <cpu us> <peak rss KiB>" on its own stdout (cpu: user + system time of the
 * command and its children, from wait4's rusage) and exits with the command's code. CPU time
 * moves far less than the wall clock when the machine is shared and loaded, so the benchmark's
 * ratios are taken from it; the wall clock is reported beside it.
 * Usage: cputime COMMAND [ARG...]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long us(struct timeval t) { return (long long)t.tv_sec * 1000000 + t.tv_usec; }

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 1);
    execvp(argv[1], argv + 1);
    _exit(127);
  }
  int status = 0;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0) return 1;
  clock_gettime(CLOCK_MONOTONIC, &b);
  long long wall = (long long)(b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000;
  printf("%lld %lld %ld\n", wall, us(ru.ru_utime) + us(ru.ru_stime), ru.ru_maxrss);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
