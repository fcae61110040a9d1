# A C compiler: tests/scripts/floor_test.ts builds the benchmark's floor programs
# (scripts/floor/*.c) with `cc`, as `deno task bench` does.
if ! command -v cc >/dev/null 2>&1; then
  echo "Installing gcc from Debian's packages"
  { $as_root apt-get update && $as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends gcc libc6-dev; } >/dev/null 2>&1 ||
    { echo "Could not install gcc"; exit 1; }
fi
