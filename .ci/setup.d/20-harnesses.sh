# The real agent harnesses for tests/harness/ (issue 10): the pinned releases from the npm registry,
# each in its own prefix under ~/.cache/roster/harnesses/<name>@<version> (outside the repo, reused
# when present), plus tmux, bubblewrap and socat (Claude Code's sandbox) and jq (the Codex recipe)
# from Debian. Sourced by .ci/run; as_root is set there. An install that fails fails the run.
harness_cache=${ROSTER_HARNESS_CACHE:-$HOME/.cache/roster/harnesses}
if ! command -v tmux >/dev/null 2>&1 || ! command -v bwrap >/dev/null 2>&1 ||
  ! command -v socat >/dev/null 2>&1 || ! command -v jq >/dev/null 2>&1; then
  echo "Installing tmux, bubblewrap, socat and jq from Debian's packages"
  { $as_root apt-get update &&
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      -o DPkg::Lock::Timeout=600 tmux bubblewrap socat jq; } >/dev/null 2>&1
  if ! command -v tmux >/dev/null 2>&1 || ! command -v bwrap >/dev/null 2>&1 ||
    ! command -v socat >/dev/null 2>&1 || ! command -v jq >/dev/null 2>&1; then
    echo "Could not install tmux, bubblewrap, socat and jq: tests/harness/ needs them"
    exit 1
  fi
fi
# name:package@version, the same pins as tests/harness/rig.ts's RELEASES.
harness_pids=()
harness_dirs=()
for spec in claude:@anthropic-ai/claude-code@2.1.328 codex:@openai/codex@0.169.0 \
  pi:@mariozechner/pi-coding-agent@0.73.1 gemini:@google/gemini-cli@0.61.0; do
  name=${spec%%:*}
  pkg=${spec#*:}
  dir="$harness_cache/$name@${pkg##*@}"
  [ -d "$dir/node_modules/.bin" ] && continue
  echo "Installing $pkg into $dir"
  mkdir -p "$harness_cache"
  rm -rf "$dir.tmp"
  mkdir -p "$dir.tmp"
  # Installed side by side (a few minutes in all); each lands in place only when complete.
  (npm install --prefix "$dir.tmp" --no-audit --no-fund --loglevel=error "$pkg" >"$dir.log" 2>&1 &&
    mv "$dir.tmp" "$dir") &
  harness_pids+=($!)
  harness_dirs+=("$dir")
done
for i in "${!harness_pids[@]}"; do
  if ! wait "${harness_pids[$i]}" || [ ! -d "${harness_dirs[$i]}/node_modules/.bin" ]; then
    echo "Could not install ${harness_dirs[$i]##*/} (log: ${harness_dirs[$i]}.log): tests/harness/ needs it"
    exit 1
  fi
done
unset harness_cache harness_pids harness_dirs spec name pkg dir i
