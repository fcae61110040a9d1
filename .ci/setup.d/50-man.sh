# mandoc and man-db, for tests/cli/man_test.ts: the manual page is linted (mandoc -T lint) and
# read (man -l) as a person would. Sourced by .ci/run; as_root is set there. Missing: the run fails.
if ! command -v mandoc >/dev/null 2>&1 || ! command -v man >/dev/null 2>&1; then
  echo "Installing mandoc and man-db from Debian's packages"
  { $as_root apt-get update &&
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      -o DPkg::Lock::Timeout=600 mandoc man-db; } >/dev/null 2>&1
  if ! command -v mandoc >/dev/null 2>&1 || ! command -v man >/dev/null 2>&1; then
    echo "Could not install mandoc and man-db: tests/cli/man_test.ts needs them"
    exit 1
  fi
fi
