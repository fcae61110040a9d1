# Prometheus and node_exporter, for tests/metrics/ (issue 15): the real textfile collector,
# promtool's checks and a real server scraping it; systemd-analyze verifies docs/fleet.md's units.
# Sourced by .ci/run; as_root is set there. A missing component fails the run.
if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1 ||
  ! command -v prometheus-node-exporter >/dev/null 2>&1 || ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "Installing prometheus, prometheus-node-exporter and systemd from Debian's packages"
  # The packages' own services are not wanted running here (the tests start their own, on a
  # free port): policy-rc.d keeps the maintainer scripts from starting them.
  prom_policy_rc=/usr/sbin/policy-rc.d
  prom_made_policy=
  if [ ! -e "$prom_policy_rc" ]; then
    printf '#!/bin/sh\nexit 101\n' | $as_root tee "$prom_policy_rc" >/dev/null && $as_root chmod 755 "$prom_policy_rc" &&
      prom_made_policy=1
  fi
  { $as_root apt-get update &&
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      -o DPkg::Lock::Timeout=600 prometheus prometheus-node-exporter systemd; } >/dev/null 2>&1
  prom_installed=$?
  [ -z "$prom_made_policy" ] || $as_root rm -f "$prom_policy_rc"
  if [ "$prom_installed" -ne 0 ] || ! command -v prometheus >/dev/null 2>&1 ||
    ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus-node-exporter >/dev/null 2>&1 ||
    ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "Could not install prometheus, prometheus-node-exporter and systemd: tests/metrics/ needs them"
    exit 1
  fi
fi
