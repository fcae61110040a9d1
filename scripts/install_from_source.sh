#!/bin/sh
# Puts roster from this checkout on PATH, with nothing but npm (or Deno 2.9.6) installed:
#   scripts/install_from_source.sh            roster is a link to scripts/roster (runs main.ts)
#   scripts/install_from_source.sh --bundle   roster runs dist/bundle/main.js (built now), which
#                                             starts faster; run it again after a `git pull`
# Into $ROSTER_INSTALL, else ~/.local/bin, made when missing; says how to put it on PATH when it
# is not. The pinned Deno is fetched now (scripts/deno), not by the first hook, and the roster
# it installs runs that Deno by its path, never a bare `deno` that PATH may not have.
set -eu
self=$0
while [ -L "$self" ]; do
  link=$(readlink "$self")
  case $link in /*) self=$link ;; *) self=$(dirname -- "$self")/$link ;; esac
done
root=$(CDPATH='' cd -- "$(dirname -- "$self")/.." && pwd -P)
dir=${ROSTER_INSTALL:-${HOME:?HOME is not set (or set ROSTER_INSTALL)}/.local/bin}

case ${1:-} in
  "") mode=link ;;
  --bundle) mode=bundle ;;
  *) echo "usage: scripts/install_from_source.sh [--bundle]" >&2; exit 2 ;;
esac

# The pinned Deno's own path: fetched from the npm registry when this machine has none.
deno=$("$root/scripts/deno" eval 'console.log(Deno.execPath())') || {
  echo "install_from_source: could not run the pinned Deno (scripts/deno)" >&2
  exit 1
}
for path in "$root" "$deno"; do
  case $path in *"'"*) echo "install_from_source: a path with a quote is not supported: $path" >&2; exit 1 ;; esac
done

mkdir -p -- "$dir"
if [ "$mode" = link ]; then
  ln -sfn -- "$root/scripts/roster" "$dir/roster"
else
  (cd "$root" && "$deno" task bundle) >&2
  tmp="$dir/.roster.$$"
  cat >"$tmp" <<EOF
#!/bin/sh
# Written by scripts/install_from_source.sh --bundle: the pinned Deno, by its path, runs the bundle.
exec '$deno' run --allow-all --v8-flags=--no-lazy,--max-semi-space-size=2,--baseline-batch-compilation-threshold=65536 --no-config '$root/dist/bundle/main.js' "\$@"
EOF
  chmod 755 "$tmp"
  mv -f -- "$tmp" "$dir/roster"
fi
echo "Installed $dir/roster"
case ":${PATH:-}:" in
  *":$dir:"*) ;;
  *)
    echo "$dir is not on your PATH. Add it, e.g. in ~/.profile or your shell's rc file:"
    echo "  export PATH=\"$dir:\$PATH\""
    ;;
esac
