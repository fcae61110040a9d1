/**
 * Which test files run on which OS. On Linux every file runs (`deno task ok`); the macOS and
 * Windows CI jobs and the Wine run (scripts/wine/test.sh) run only the files listed for their
 * OS, since the rest drive Linux for real. Each Linux-only file says why. Tests inside a
 * listed file that need something an OS lacks carry their own `ignore` guard with a reason.
 * tests/platforms_test.ts checks that every test file is listed here exactly once.
 */

/** Pure logic and fixtures: no process, no /proc, no POSIX modes. Passed under Wine too. */
export const EVERYWHERE: readonly string[] = [
  "tests/duration_test.ts",
  "tests/errors_test.ts",
  "tests/cli/terminal_test.ts",
  "tests/continuation/rules_test.ts",
  "tests/continuation/schema_test.ts",
  "tests/process/bsd_test.ts",
  "tests/process/darwin_test.ts",
  "tests/process/exit_wait_test.ts",
  "tests/process/freebsd_test.ts",
  "tests/process/linux_test.ts",
  "tests/process/ps_test.ts",
  "tests/process/real_backend_test.ts",
  "tests/process/types_test.ts",
  "tests/process/windows_test.ts",
  "tests/registry/home_test.ts",
  "tests/registry/sweep_test.ts",
  "tests/fs/flock_test.ts",
  "tests/identity/liveness_test.ts",
  "tests/registry/owner_test.ts",
  "tests/cli/restore_select_test.ts",
  "tests/registry/record_test.ts",
  "tests/layouts/layouts_test.ts",
  "tests/scripts/derive_offsets_test.ts",
  "tests/platforms_test.ts",
  "tests/workflows/workflows_test.ts",
  "tests/cli/json_element_test.ts",
  "tests/fs/private_test.ts",
  "tests/identity/host_test.ts",
  "tests/chars_test.ts",
  "tests/utf8_test.ts",
  "tests/scripts/stats_test.ts",
];

/** Tests written for Windows: real kernel32, Windows file modes, the CLI end to end. */
export const WINDOWS_ONLY: readonly string[] = [
  "tests/windows/backend_test.ts",
  "tests/windows/cli_test.ts",
  "tests/windows/other_os_test.ts",
  "tests/windows/stale_parent_test.ts",
];

/** Files that run on Linux only, each with the reason. */
export const LINUX_ONLY: Readonly<Record<string, string>> = {
  "tests/scripts/layers_test.ts": "copies the tree and runs the layer check by Unix paths",
  "tests/cli/args_test.ts": "help snapshots compare LF text and Unix paths",
  "tests/cli/completions_test.ts": "drives bash, zsh and fish",
  "tests/cli/e2e_test.ts": "spawns sleep and sh, reads /proc, checks POSIX modes",
  "tests/cli/hooks_test.ts": "real processes read through /proc",
  "tests/continuation/check_test.ts": "checks POSIX modes (chmod)",
  "tests/continuation/e2e_test.ts": "spawns sleep and sh, private pid namespaces",
  "tests/continuation/ledger_test.ts": "FIFOs, symlinks and POSIX modes",
  "tests/continuation/ledger_trust_test.ts": "symbolic links and a spawned sleeper",
  "tests/continuation/lock_test.ts": "spawns sleep; Windows locking is in tests/windows",
  "tests/continuation/plan_test.ts":
    "ledger files checked by POSIX mode (fixed with the store rules)",
  "tests/metrics/tally_test.ts": "FIFOs (mkfifo) and POSIX modes",
  "tests/recipes/ci_test.ts": "the recipe is a bash script",
  "tests/recipes/claude_test.ts": "the real Claude Code release, in tmux",
  "tests/recipes/codex_test.ts": "the real Codex release, in tmux",
  "tests/recipes/pi_test.ts": "the real pi release, in tmux",
  "tests/recipes/shell_test.ts": "the recipe runs in bash and zsh",
  "tests/registry/discover_test.ts": "reads /proc; FIFOs and POSIX modes",
  "tests/reliability/crash_test.ts": "SIGKILL at pause points, POSIX signals",
  "tests/reliability/disk_test.ts": "mounts a tiny tmpfs",
  "tests/reliability/hostile_test.ts": "FIFOs, symlinks, POSIX modes",
  "tests/reliability/hostility_test.ts": "bash with bytes that are not UTF-8, FIFOs, POSIX modes",
  "tests/reliability/multiuser_test.ts": "useradd and setpriv: two real Unix users",
  "tests/fs/dir_test.ts": "POSIX owners, modes and FIFOs",
  "tests/reliability/liveness_truth_test.ts": "cross-checks /proc against ps",
  "tests/reliability/load_test.ts": "spawns sleep by the hundred",
  "tests/reliability/permissions_test.ts": "POSIX owners and modes",
  "tests/scripts/build_test.ts": "runs scripts/build.ts with Unix paths",
  "tests/scripts/floor_test.ts": "the floors are C and libc calls over Linux's /proc",
  "tests/cli/startup_test.ts": "watches each call with strace",
  "tests/scripts/install_test.ts": "scripts/install.sh is POSIX sh",
  "tests/scripts/launcher_test.ts": "scripts/deno is POSIX sh",
  "tests/serial/pid_reuse_test.ts": "private pid namespaces (unshare)",
  "tests/cli/consistency_test.ts": "spawns sleep and sh as sessions",
  "tests/cli/doctor_test.ts": "checks POSIX modes (chmod) and spawns sleep",
  "tests/cli/exec_test.ts": "runs sh children and POSIX signals",
  "tests/cli/hooks_install_test.ts": "settings files checked by POSIX mode",
  "tests/cli/hooks_roundtrip_test.ts": "settings files checked by POSIX mode",
  "tests/cli/hooks_hostile_test.ts": "symlinks, FIFOs (mkfifo) and POSIX modes",
  "tests/cli/doctor_fire_test.ts": "executables on PATH by POSIX mode, symlinks",
  "tests/cli/man_test.ts": "mandoc and man-db from Debian",
  "tests/cli/list_output_test.ts": "spawns sleep as sessions",
  "tests/cli/external_sort_test.ts": "finds the unlinked spill file through /proc/self/fd",
  "tests/cli/schema_test.ts": "spawns sleep as sessions",
  "tests/format/format_test.ts": "compares generated files' LF text, as the schemas' test does",
  "tests/cli/wait_test.ts": "spawns sleep; the pidfd path is Linux's",
  "tests/cli/activity_test.ts": "spawns sleep as the session and judges it through /proc",
  "tests/continuation/commands_test.ts": "spawns sleep; ledger files checked by POSIX mode",
  "tests/cli/restore_test.ts": "drives a real tmux server and bash stand-ins",
  "tests/continuation/tmux_test.ts": "drives a real tmux server",
  "tests/helpers_test.ts": "reads /proc and drives a real tmux server",
  "tests/fs/dirstream_test.ts": "libc's openat/statx path and FIFOs",
  "tests/harness/activity_test.ts": "the real harness releases in tmux (Linux npm builds)",
  "tests/harness/claude_test.ts": "the real Claude Code release (Linux npm build)",
  "tests/harness/codex_server_test.ts": "the real Codex app-server (Linux npm build)",
  "tests/harness/codex_test.ts": "the real Codex release (Linux npm build)",
  "tests/harness/codex_trust_test.ts": "the real Codex release (Linux npm build)",
  "tests/harness/gemini_test.ts": "the real Gemini CLI release (Linux npm build)",
  "tests/harness/nested_test.ts": "real harnesses nested in a Claude Code session",
  "tests/harness/own_session_test.ts": "the real Claude Code release, resumed, under bwrap",
  "tests/harness/pi_test.ts": "the real pi release (Linux npm build)",
  "tests/harness/restore_claude_test.ts":
    "roster restore with the real Claude Code release in tmux",
  "tests/harness/restore_others_test.ts":
    "roster restore with the real Codex, pi and Gemini CLI in tmux",
  "tests/harness/sandbox_test.ts": "a harness's sandbox: a private pid namespace",
  "tests/metrics/fleet_docs_test.ts": "systemd units, cron and Debian's promtool",
  "tests/metrics/node_exporter_test.ts": "Debian's node_exporter and promtool",
  "tests/metrics/prometheus_test.ts": "Debian's Prometheus and node_exporter",
  "tests/process/libc_probe_test.ts": "Linux's /proc probes through libc",
  "tests/process/listing_test.ts": "listings of /proc, private pid namespaces",
  "tests/process/timens_wrap_test.ts": "time namespaces (unshare -T)",
  "tests/recipes/budgets_test.ts": "reads docs/hooks.md by a Unix path (tests/recipes/harness.ts)",
  "tests/registry/lifecycle_test.ts": "spawns sleep as sessions, read through /proc",
  "tests/registry/place_test.ts": "private pid namespaces (unshare)",
  "tests/registry/clone_test.ts": "spawns sleep as the session beside a clone's record",
  "tests/registry/other_os_test.ts": "spawns sleep as the Linux session beside Windows records",
  "tests/registry/older_roster_test.ts": "runs older rosters unpacked with git and tar",
  "tests/registry/sandbox_list_test.ts": "bubblewrap and unshare sandboxes",
  "tests/registry/timens_test.ts": "time namespaces (unshare -T)",
  "tests/reliability/scale_test.ts": "spawns sleep; V8 heap caps over /proc reads",
  "tests/scripts/bundle_test.ts": "runs the bundle's hook commands against sleep sessions",
  "tests/scripts/baked_permissions_test.ts":
    "each OS's code paths under its binary's flags, run on Linux (tests/cli/as_os.ts)",
  "tests/scripts/ci_under_load_test.ts": "the load drill is a bash script over /proc",
  "tests/reliability/foreign_proc_test.ts": "pid namespaces and /proc mounts (nsenter, unshare)",
  "tests/scripts/lazy_test.ts": "reads the sources by file URL; not yet run under Wine",
  "tests/fs/read_race_test.ts": "a shell (sh, mv) replaces the file by rename in a loop",
  "tests/fs/umask_test.ts": "reads the process's umask from /proc/self/status",
  "tests/fs/io_test.ts":
    "pure byte loops, and a replace checked by POSIX mode and links; not yet run under Wine",
  "tests/continuation/keys_test.ts":
    "ledger files put with POSIX modes (chmod); not yet run under Wine",
  "tests/reliability/fifo_identity_test.ts":
    "bubblewrap binds a FIFO over /etc/machine-id and boot_id",
  "tests/cli/restore_activity_test.ts":
    "pure, but not yet run under Wine or on macOS (move it to EVERYWHERE once it passes there)",
  "tests/cli/unregister_refused_test.ts": "spawns sleep; a store refused by POSIX owner and mode",
  "tests/metrics/hostile_exposition_test.ts": "spawns sleep; Debian's promtool",
  "tests/registry/own_session_test.ts": "private pid namespaces (unshare), read through /proc",
  "tests/reliability/textfile_race_test.ts": "symlink races and POSIX modes (chmod)",
  "tests/scripts/ci_stages_test.ts": "the stage runner: setsid process groups, /proc environments",
  "tests/registry/seams_test.ts": "spawns sleep as sessions, read through /proc",
  "tests/registry/wb_differential_test.ts": "spawns sleep as sessions, read through /proc",
  "tests/scripts/architecture_test.ts": "copies the tree and checks it by Unix paths",
};

/** The files (or directories) to run on `os`; every file on Linux. */
export function testFilesFor(os: typeof Deno.build.os): string[] {
  if (os === "linux") return ["tests/"];
  return os === "windows" ? [...EVERYWHERE, ...WINDOWS_ONLY] : [...EVERYWHERE];
}

if (import.meta.main) {
  // `deno run --allow-read tests/platforms.ts [os]`: the list, one file a line.
  const os = (Deno.args[0] ?? Deno.build.os) as typeof Deno.build.os;
  console.log(testFilesFor(os).join("\n"));
}
