# Prometheus and node_exporter, for tests/metrics/ (issue 15): the real textfile collector,
# promtool's checks and a real server scraping it; systemd-analyze verifies docs/fleet.md's units.
# Sourced by .ci/run; as_root is set there. A missing component fails the run.
if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1 ||
  ! command -v prometheus-node-exporter >/dev/null 2>&1 || ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "Installing prometheus, prometheus-node-exporter and systemd from Debian's packages"
  # The packages' own services are not wanted running here (the tests start their own, on a
  # free port): policy-rc.d keeps the maintainer scripts from starting them.
  policy_rc=/usr/sbin/policy-rc.d
  made_policy=
  if [ ! -e "$policy_rc" ]; then
    printf '#!/bin/sh\nexit 101\n' | $as_root tee "$policy_rc" >/dev/null && $as_root chmod 755 "$policy_rc" &&
      made_policy=1
  fi
  { $as_root apt-get update &&
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      -o DPkg::Lock::Timeout=600 prometheus prometheus-node-exporter systemd; } >/dev/null 2>&1
  installed=$?
  [ -z "$made_policy" ] || $as_root rm -f "$policy_rc"
  if [ "$installed" -ne 0 ] || ! command -v prometheus >/dev/null 2>&1 ||
    ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus-node-exporter >/dev/null 2>&1; then
    echo "Could not install prometheus and prometheus-node-exporter: tests/metrics/ needs them"
    exit 1
  fi
fi
