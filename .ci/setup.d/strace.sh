# strace: tests/continuation/commands_test.ts watches a claiming check's system calls to see the
# ledger directory fsynced after the claim is linked (issue 11: a power loss must not lose a claim).
if ! command -v strace >/dev/null 2>&1; then
  echo "Installing strace from Debian's packages"
  { $as_root apt-get update && $as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends strace; } >/dev/null 2>&1 ||
    { echo "Could not install strace"; exit 1; }
fi
