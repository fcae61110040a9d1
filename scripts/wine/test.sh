#!/usr/bin/env bash
# Runs roster's Windows tests with the real Windows build of Deno under Wine, on Linux.
# Usage: scripts/wine/test.sh [test files or directories...] (default: the Windows test set).
# Each run gets a private WINEPREFIX, ended with `wineserver -k` and removed; Deno's summary line
# ("ok | N passed | M failed") is printed as-is so scripts/ci_stages.ts counts it.
# Tests under Wine spawn `ping.exe -n N 127.0.0.1` as a sleeper, never deno.exe (~130 MB each).
# The run is bounded (ROSTER_WINE_BOUND seconds, default 900): at the bound, or on SIGTERM or
# SIGINT, deno.exe is ended and `wineserver -k` ends every Windows process of the prefix.
set -uo pipefail
cd "$(dirname "$0")/../.."

cache=$(bash scripts/wine/setup.sh | tail -n 1) || exit 1
[ -s "$cache/deno.exe" ] || { echo "Wine set-up left no deno.exe in $cache" >&2; exit 1; }

wine=$(command -v wine64 || command -v wine || ls /usr/lib/wine/wine64 2>/dev/null) ||
  { echo "wine64 is not installed" >&2; exit 1; }
wineserver=$(command -v wineserver || ls /usr/lib/wine/wineserver64 2>/dev/null) ||
  { echo "wineserver is not installed" >&2; exit 1; }

# By default the files tests/platforms.ts lists for Windows: the OS-neutral tests and the
# Windows-only ones, as the Windows CI job runs them.
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(deno run --allow-read tests/platforms.ts windows) || exit 1
  [ ${#files[@]} -gt 0 ] || { echo "tests/platforms.ts listed no Windows tests" >&2; exit 1; }
fi

prefix=$(mktemp -d "${TMPDIR:-/tmp}/roster-wine.XXXXXX")
export WINEPREFIX="$prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" DENO_DISABLE_NODE_SHIM=1
export NO_COLOR=1 ROSTER_UNDER_WINE=1
cleanup() {
  "$wineserver" -k >/dev/null 2>&1
  rm -rf "$prefix"
}
trap cleanup EXIT
# bash runs a trap only once the foreground command returns: the run goes in the background and
# is waited for, so a SIGTERM (ci_stages.ts's bound) ends it at once.
run=
on_signal() {
  [ -z "$run" ] || kill -TERM "$run" 2>/dev/null
  exit 143
}
trap on_signal TERM INT

bound=${ROSTER_WINE_BOUND:-900}
# Type checking happened on Linux (deno check in `deno task ok`); the Windows run only executes.
# Windows consoles end lines with CR LF: drop the CR so summaries parse like Linux ones, line by
# line (unbuffered), so that a run ended at its bound has shown the test it stopped in.
# deno.exe is the one process waited for: once it ends, `wineserver -k` ends the rest of the
# prefix (services.exe and explorer.exe inherit this pipe, so `sed` would otherwise wait for them).
(
  timeout --signal=TERM --kill-after=15 "$bound" "$wine" "$cache/deno.exe" test --allow-all \
    --no-check "${files[@]}"
  echo $? >"$prefix.status"
  "$wineserver" -k >/dev/null 2>&1
) 2>&1 | sed -u 's/\r//g' &
run=$!
wait "$run"
# The pipeline's status is sed's: deno.exe's (or timeout's 124) is in the file.
status=$(cat "$prefix.status" 2>/dev/null || echo 1)
rm -f "$prefix.status"
if [ "$status" -eq 124 ]; then
  echo "The Windows tests under Wine hit their bound of ${bound} s (ROSTER_WINE_BOUND): ended" >&2
fi
exit "$status"
