#!/bin/sh
# roster installer: downloads the release binary for this OS and CPU, verifies it against the
# release's SHA256SUMS, and installs it as $ROSTER_INSTALL/roster (default ~/.local/bin).
#
#   curl -fsSL <release>/install.sh | sh
#
# ROSTER_BASE_URL overrides where binaries come from (tests serve a local directory).
# Nothing is installed unless the checksum matches, and nothing is left behind on failure.
set -eu

BASE_URL="${ROSTER_BASE_URL:-https://github.com/roster-dev/roster/releases/latest/download}"
INSTALL_DIR="${ROSTER_INSTALL:-${HOME:?HOME is not set}/.local/bin}"

die() {
  printf 'roster install: %s\n' "$*" >&2
  exit 1
}

target() {
  os=$(uname -s)
  arch=$(uname -m)
  case "$arch" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) arch="" ;;
  esac
  case "$os" in
    Linux) [ -n "$arch" ] && echo "$arch-unknown-linux-gnu" && return ;;
    Darwin) [ -n "$arch" ] && echo "$arch-apple-darwin" && return ;;
    MINGW* | MSYS* | CYGWIN*) [ "$arch" = x86_64 ] && echo "x86_64-pc-windows-msvc" && return ;;
  esac
  die "unsupported platform: $(uname -s) $(uname -m) (binaries exist for Linux and macOS on x86_64 and aarch64, and Windows on x86_64)"
}

if command -v curl >/dev/null 2>&1; then
  fetch() { curl -fsSL --retry 2 -o "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
  fetch() { wget -q -O "$2" "$1"; }
else
  die "needs curl or wget to download"
fi

if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | awk '{ print $1 }'; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | awk '{ print $1 }'; }
else
  die "needs sha256sum or shasum to verify the download"
fi

TARGET=$(target) || exit 1
case "$TARGET" in
  *windows*) EXE=.exe ;;
  *) EXE= ;;
esac
ASSET="roster-$TARGET$EXE"
DEST="$INSTALL_DIR/roster$EXE"

# Downloads go to a private temp dir; the staged copy lives beside DEST so the final mv is a
# rename on one file system (atomic). Both go on any exit, so a failure leaves nothing behind.
TMP=""
STAGED=""
cleanup() {
  [ -z "$TMP" ] || rm -rf "$TMP"
  [ -z "$STAGED" ] || rm -f "$STAGED"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
TMP=$(mktemp -d 2>/dev/null || mktemp -d -t roster) || die "cannot create a temp directory"

fetch "$BASE_URL/$ASSET" "$TMP/$ASSET" || die "download failed: $BASE_URL/$ASSET"
fetch "$BASE_URL/SHA256SUMS" "$TMP/SHA256SUMS" || die "download failed: $BASE_URL/SHA256SUMS"

expected=$(awk -v f="$ASSET" '$2 == f || $2 == "*" f { print tolower($1); exit }' "$TMP/SHA256SUMS")
[ -n "$expected" ] || die "SHA256SUMS lists no checksum for $ASSET; refusing to install"
actual=$(sha256 "$TMP/$ASSET")
if [ "$actual" != "$expected" ]; then
  die "checksum mismatch for $ASSET (expected $expected, got $actual); refusing to install it"
fi

mkdir -p "$INSTALL_DIR" || die "cannot create $INSTALL_DIR"
STAGED="$INSTALL_DIR/.roster-install.$$"
cp "$TMP/$ASSET" "$STAGED" || die "cannot write to $INSTALL_DIR"
chmod 755 "$STAGED"
mv -f "$STAGED" "$DEST" || die "cannot install $DEST"
STAGED=""

version=$("$DEST" --version 2>/dev/null || echo roster)
echo "Installed $version to $DEST"
case ":${PATH:-}:" in
  *":$INSTALL_DIR:"*) ;;
  *)
    echo "$INSTALL_DIR is not on your PATH. Add it, e.g. in ~/.profile or your shell's rc file:"
    echo "  export PATH=\"$INSTALL_DIR:\$PATH\""
    ;;
esac
