#!/usr/bin/env bash
# Installs what running the Windows build of Deno under Wine needs, into a cache outside the
# repository: Debian's wine64 and mingw-w64 (only when missing), @deno/win32-x64 from the npm
# registry, a bcryptprimitives.dll exporting ProcessPrng (Wine 8.0 has none), and a copy of
# deno.exe whose one `VirtualAlloc2` string reads `VirtualAllocX` (Wine 8.0 lacks
# MEM_RESERVE_PLACEHOLDER, and V8 takes its fallback when it cannot find VirtualAlloc2).
# See docs/platforms.md. Prints the cache directory on its last line; exits non-zero on failure.
set -euo pipefail

DENO_WIN_VERSION=${DENO_WIN_VERSION:-2.9.6}
cache=${ROSTER_WINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/roster-wine/$DENO_WIN_VERSION}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

fail() { echo "Wine set-up failed: $*" >&2; exit 1; }

# Debian's wine64 puts wine64 and wineserver in /usr/lib/wine, not on PATH.
have_wine() { command -v wine64 || command -v wine || ls /usr/lib/wine/wine64; } >/dev/null 2>&1
if ! have_wine || ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || fail "wine64 and gcc-mingw-w64-x86-64 are missing and there is no apt-get"
  as_root=; [ "$(id -u)" -eq 0 ] || as_root="sudo -n"
  echo "Installing wine64 and gcc-mingw-w64-x86-64 from Debian's packages" >&2
  # Other set-up steps may hold the dpkg lock: wait for it rather than fail.
  { $as_root apt-get -o DPkg::Lock::Timeout=600 update &&
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y \
      --no-install-recommends wine64 gcc-mingw-w64-x86-64; } >&2 ||
    fail "could not install wine64 and gcc-mingw-w64-x86-64"
fi

mkdir -p "$cache"
if [ ! -s "$cache/deno.exe" ]; then
  echo "Fetching @deno/win32-x64@$DENO_WIN_VERSION from the npm registry" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "@deno/win32-x64@$DENO_WIN_VERSION" >/dev/null) ||
    fail "npm pack @deno/win32-x64@$DENO_WIN_VERSION"
  tar -xzf "$tmp"/deno-win32-x64-*.tgz -C "$tmp" package/deno.exe || fail "unpacking deno.exe"
  # Exactly one occurrence, or this is a build the fix was not checked against.
  offsets=$(grep -boa 'VirtualAlloc2' "$tmp/package/deno.exe" | cut -d: -f1)
  [ "$(wc -w <<<"$offsets")" -eq 1 ] || fail "expected one VirtualAlloc2 string in deno.exe, found: ${offsets:-none}"
  # The last byte of the name: '2' becomes 'X'.
  printf 'X' | dd of="$tmp/package/deno.exe" bs=1 seek=$((offsets + 12)) conv=notrunc status=none
  grep -qa 'VirtualAllocX' "$tmp/package/deno.exe" || fail "patching VirtualAlloc2"
  mv "$tmp/package/deno.exe" "$cache/deno.exe.partial"
  mv "$cache/deno.exe.partial" "$cache/deno.exe"
fi
if [ ! -s "$cache/bcryptprimitives.dll" ] || [ "$here/prng.c" -nt "$cache/bcryptprimitives.dll" ]; then
  x86_64-w64-mingw32-gcc -O2 -shared -o "$cache/bcryptprimitives.dll.partial" "$here/prng.c" \
    -ladvapi32 || fail "building bcryptprimitives.dll"
  mv "$cache/bcryptprimitives.dll.partial" "$cache/bcryptprimitives.dll"
fi
echo "$cache"
