# Wine, mingw-w64 and the Windows build of Deno (scripts/wine/setup.sh), for the Windows tests
# that `deno task ok` runs under Wine (scripts/wine/test.sh). Sourced by .ci/run.
echo "Setting up Wine and @deno/win32-x64 for the Windows tests (scripts/wine/setup.sh)"
bash scripts/wine/setup.sh >/dev/null || { echo "Could not set up Wine: the Windows tests cannot run"; exit 1; }
