#!/usr/bin/env bash
# The load drill: the whole suite (`deno task ok`, scripts/ci_stages.ts) on a host that is busy
# and not empty, N times in a row (default 3): a CPU hog keeps the load average at 8x the core
# count, a process hog holds a thousand more processes, and a Codex-like shared server (comm
# `codex`, argv `codex ... app-server --listen stdio:// --managed-daemon`) and a fake Claude Code
# session (comm `claude`, CLAUDE_* in its environment, its ~/.claude/sessions/<pid>.json) run
# beside it. The suite runs with HOME set to the drill's own home (its ~/.cache and ~/.npm are
# links to the real ones, for the harnesses and Deno's cache), so the fake session's file is
# there and nowhere real. Time bounds are scaled (ROSTER_TEST_BOUND_SCALE, ROSTER_CI_BOUND_SCALE:
# DRILL_SCALE, default 4): they catch hangs, and a host eight times oversubscribed is not one.
#
#   scripts/ci_under_load.sh [--runs N] [STAGE...]      (stages as scripts/ci_stages.ts names them)
#
# DRILL_LOAD (default 8) times the cores busy loops, at nice DRILL_NICE (default 10: they keep
# the load average up and take a share of the CPU, without starving the suite for hours);
# DRILL_PROCS (default 1000) sleeping processes. Prints each run's time, the load it saw and
# its totals; exits 1 unless every run passed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

runs=3
stages=()
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --runs=*) runs=${1#--runs=}; shift ;;
    *) stages+=("$1"); shift ;;
  esac
done

cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)
hogs=$(( ${DRILL_LOAD:-8} * cores ))
nice_level=${DRILL_NICE:-10}
procs=${DRILL_PROCS:-1000}
scale=${DRILL_SCALE:-4}
real_home=$HOME

drill=$(mktemp -d "${TMPDIR:-/tmp}/roster-drill.XXXXXX")
pids=()
fakes=()
cleanup() {
  # Only what this drill started, by pid (and the sleep each fake harness's loop runs).
  disown -a 2>/dev/null
  for p in "${fakes[@]}"; do pkill -KILL -P "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  # A killed process is gone only once the kernel has run its exit, which on a loaded machine
  # comes later: wait (10 s at most) until each is gone or a zombie, so none outlives the drill.
  for _ in $(seq 1 100); do
    alive=0
    for p in "${pids[@]}"; do
      stat= # the state is the letter after the last ")" (comm may hold one)
      read -r stat <"/proc/$p/stat" 2>/dev/null || continue
      stat=${stat##*) }
      case ${stat:0:1} in Z | X) ;; *) alive=1; break ;; esac
    done
    [ "$alive" -eq 0 ] && break
    sleep 0.1
  done
  rm -rf "$drill"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# --- The drill's home: the real caches, a fake Claude session's file, nothing else real -----
home=$drill/home
mkdir -p "$home/.claude/sessions" "$drill/bin"
for d in .cache .npm; do
  [ -e "$real_home/$d" ] && ln -s "$real_home/$d" "$home/$d"
done

# --- A Codex-like shared server and a fake Claude Code session -----------------------------
# Copies of bash under the harnesses' names: comm and exe read `codex` and `claude`.
cp "$(command -v bash)" "$drill/bin/codex"
cp "$(command -v bash)" "$drill/bin/claude"
"$drill/bin/codex" -c 'while :; do sleep 3600; done' app-server --listen stdio:// --managed-daemon \
  </dev/null >/dev/null 2>&1 &
pids+=($!)
fakes+=($!)
session_id=$(cat /proc/sys/kernel/random/uuid 2>/dev/null || echo 00000000-0000-4000-8000-000000000000)
env CLAUDECODE=1 CLAUDE_CODE_ENTRYPOINT=cli CLAUDE_CODE_SESSION_ID="$session_id" \
  "$drill/bin/claude" -c 'while :; do sleep 3600; done' claude --dangerously-skip-permissions \
  </dev/null >/dev/null 2>&1 &
claude_pid=$!
pids+=("$claude_pid")
fakes+=("$claude_pid")
printf '{"pid":%d,"sessionId":"%s","cwd":"%s","startedAt":%d,"kind":"interactive","entrypoint":"cli"}\n' \
  "$claude_pid" "$session_id" "$root" "$(($(date +%s) * 1000))" >"$home/.claude/sessions/$claude_pid.json"

# --- The process hog and the CPU hog ---------------------------------------------------------
for _ in $(seq 1 "$procs"); do
  sleep 100000 </dev/null >/dev/null 2>&1 &
  pids+=($!)
done
for _ in $(seq 1 "$hogs"); do
  nice -n "$nice_level" sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &
  pids+=($!)
done
echo "Load drill: $hogs busy loops (nice $nice_level) on $cores cores, $procs more processes, a codex" \
  "app-server (pid ${pids[0]}), a Claude session (pid $claude_pid); HOME=$home; bounds x$scale"

# Samples the 1-minute load average every 15 s while a run goes on.
sample_load() {
  while :; do
    cut -d' ' -f1 /proc/loadavg >>"$1"
    sleep 15
  done
}

passed_runs=0
summary=()
for run in $(seq 1 "$runs"); do
  log=$drill/run-$run.log
  loads=$drill/load-$run
  sleep "${DRILL_WARMUP:-20}" # the load average climbs before each run
  sample_load "$loads" </dev/null >/dev/null 2>&1 &
  sampler=$!
  started=$(date +%s)
  env HOME="$home" ROSTER_TEST_BOUND_SCALE="$scale" ROSTER_CI_BOUND_SCALE="$scale" CI=true \
    "$root/scripts/deno" task ok "${stages[@]}" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  took=$(( $(date +%s) - started ))
  kill -KILL "$sampler" 2>/dev/null # its sleep of at most 15 s ends by itself
  wait "$sampler" 2>/dev/null
  load=$(sort -n "$loads" | awk '{a[NR]=$1; s+=$1} END {if (NR) printf "load min %s, mean %.1f, max %s", a[1], s/NR, a[NR]}')
  totals=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
  line="run $run: $([ "$status" -eq 0 ] && echo passed || echo FAILED) in $((took / 60))m$((took % 60))s ($load): ${totals:-no totals}"
  summary+=("$line")
  echo "$line"
  [ "$status" -eq 0 ] && passed_runs=$((passed_runs + 1))
done

echo
echo "Load drill on $cores cores, $hogs busy loops (nice $nice_level), $procs more processes, a codex app-server and a Claude session:"
for l in "${summary[@]}"; do echo "  $l"; done
echo "$passed_runs of $runs runs passed"
[ "$passed_runs" -eq "$runs" ]
