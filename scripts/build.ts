/**
 * Release build: `deno compile` roster for each supported target into dist/roster-<target>[.exe],
 * then dist/SHA256SUMS for the binaries of this run (what scripts/install.sh verifies against).
 *
 *   deno task compile [--target host|all|<target>] [--out DIR] [--verbose]
 *
 * What is compiled is the code-split bundle (scripts/bundle.ts), built fresh into a temp dir for
 * each build: each command then compiles only its own JavaScript at start-up, where main.ts and
 * its TypeScript modules cost by the byte, comments included (docs/performance.md). The
 * bundle's chunks import each other through a specifier in a variable, which deno compile does
 * not follow by itself, so every chunk is passed with --include. The version needs no stamping:
 * src/version.ts imports deno.json, which the bundle inlines. Where the compile base (denort)
 * cannot be downloaded, DENORT_BIN names a local one; deno compile reads that variable itself.
 */
import { manPage } from "../src/cli/man.ts";
import { VERSION } from "../src/version.ts";
import { bundle, BundleError, ENTRY, runDeno } from "./bundle.ts";

export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;

export type Target = (typeof TARGETS)[number];

/** A failure the user can act on: printed as one `build: ...` line, exit 1. */
export class BuildError extends Error {}

/** The repo root as a path ("C:/..." on Windows), with a trailing slash. */
export const ROOT = decodeURIComponent(new URL("../", import.meta.url).pathname)
  .replace(/^\/([A-Za-z]:)/, "$1");

export function isTarget(value: string): value is Target {
  return (TARGETS as readonly string[]).includes(value);
}

/** `host` (this machine only), `all`, or one named target. */
export function resolveTargets(value: string, host: string): Target[] {
  if (value === "all") return [...TARGETS];
  if (value === "host") {
    if (!isTarget(host)) {
      throw new BuildError(
        `this machine (${host}) is not a release target; name one with --target (${
          TARGETS.join(", ")
        })`,
      );
    }
    return [host];
  }
  if (isTarget(value)) return [value];
  throw new BuildError(
    `unknown target ${JSON.stringify(value)}: expected host, all, or one of ${TARGETS.join(", ")}`,
  );
}

export function outputName(target: Target): string {
  return `roster-${target}${target.includes("windows") ? ".exe" : ""}`;
}

/** The OS a target's binary runs on, which decides its permissions. */
export type TargetOs = "linux" | "darwin" | "windows";

export function osOf(target: Target): TargetOs {
  return target.includes("linux") ? "linux" : target.includes("windows") ? "windows" : "darwin";
}

/**
 * The permissions baked into each binary, per OS: the one table (docs/decisions.md,
 * "Permissions baked into the binaries"; tests/scripts/baked_permissions_test.ts runs every
 * command under each). Linux: all, because Deno gates every /proc read behind all access.
 * Elsewhere only what that OS's code uses: files, the environment, FFI for the process
 * backend, the host name and uptime, the uid on POSIX (Windows has none), and run for any
 * program, since `exec` runs the caller's command and `continuation-check --tmux` runs tmux
 * (macOS also falls back to `ps`). --no-prompt: a hook must fail, never wait on a prompt.
 */
export const PERMISSIONS: Readonly<Record<TargetOs, readonly string[]>> = {
  linux: ["--allow-all", "--no-prompt"],
  darwin: [
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-ffi",
    "--allow-sys=hostname,osUptime,uid,umask",
    "--allow-run",
    "--no-prompt",
  ],
  windows: [
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-ffi",
    "--allow-sys=hostname,osUptime",
    "--allow-run",
    "--no-prompt",
  ],
};

export function permissionsFor(target: Target): string[] {
  return [...PERMISSIONS[osOf(target)]];
}

/**
 * V8 flags baked into every binary (and used by `deno task roster`, scripts/roster, the README's
 * install line and the benchmark; tests/scripts/build_test.ts checks that they agree).
 * --no-lazy compiles every function up front, so the code cache holds them all and a call
 * does not pay for lazy compilation: about 2.5 ms (10%) off `register` (docs/performance.md).
 * --max-semi-space-size caps V8's young generation (MiB per semi-space): by default it grows to
 * 16 MiB over a long `list` or `prune`, so peak memory followed the store's size; capped, it is
 * bounded by a row (docs/performance.md, "Memory"). A hook allocates far less than the cap.
 * --baseline-batch-compilation-threshold is how much warm bytecode V8 queues before Sparkplug
 * compiles it, 4 KiB by default: every hook queued 13 to 53 KiB and paid for compiling it (about
 * 0.8 ms of activity's CPU), to run a few more calls of it. At 64 KiB no hook call reaches a
 * batch (tests/scripts/bundle_test.ts), while `list` and `prune` queue hundreds of KiB early and
 * compile them as before: the same CPU at 1,000 to 100,000 records (docs/performance.md fix 19).
 */
export const V8_FLAGS = [
  "--v8-flags=--no-lazy,--max-semi-space-size=2,--baseline-batch-compilation-threshold=65536",
];

/**
 * deno compile's arguments, run in the bundle's directory: its main.js, every other chunk with
 * --include. --no-config: the bundle needs no configuration (deno.json is inlined), and none
 * found above a temp dir may change it.
 */
export function compileArgs(target: Target, output: string, chunks: readonly string[]): string[] {
  return [
    "compile",
    "--no-config",
    "--target",
    target,
    "--output",
    output,
    ...permissionsFor(target),
    ...V8_FLAGS,
    ...chunks.filter((c) => c !== ENTRY).flatMap((c) => ["--include", c]),
    ENTRY,
  ];
}

/** sha256sum's text format: `<hex>  <name>`, one line each, sorted so the file is stable. */
export function formatSha256Sums(entries: readonly { name: string; sha256: string }[]): string {
  return [...entries]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((e) => {
      if (!/^[0-9a-f]{64}$/.test(e.sha256)) throw new BuildError(`bad sha256 for ${e.name}`);
      if (/[\s\\]/.test(e.name)) throw new BuildError(`unsupported file name ${e.name}`);
      return `${e.sha256}  ${e.name}\n`;
    })
    .join("");
}

export async function sha256Hex(data: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** deno compile fails this way when it cannot fetch denort for the target. */
export function isBaseDownloadFailure(stderr: string): boolean {
  return /Setting up base binary|dl\.deno\.land|denort-[\w-]+\.zip/.test(stderr);
}

export interface Options {
  target: string;
  out: string;
  verbose: boolean;
  help: boolean;
}

export function parseOptions(args: readonly string[]): Options {
  const opts: Options = { target: "host", out: `${ROOT}dist`, verbose: false, help: false };
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].startsWith("--") && args[i].includes("=")
      ? [args[i].slice(0, args[i].indexOf("=")), args[i].slice(args[i].indexOf("=") + 1)]
      : [args[i], undefined];
    const value = () => {
      const v = inline ?? args[++i];
      if (v === undefined || v === "") throw new BuildError(`missing value for ${flag}`);
      return v;
    };
    if (flag === "--target") opts.target = value();
    else if (flag === "--out") opts.out = value();
    else if (flag === "--verbose" || flag === "-v") opts.verbose = true;
    else if (flag === "--help" || flag === "-h") opts.help = true;
    else throw new BuildError(`unknown argument ${JSON.stringify(args[i])} (see --help)`);
  }
  return opts;
}

/**
 * DENORT_BIN replaces the base of every target alike, so it can only serve the one target it
 * was built for: one binary for all targets would produce four broken ones.
 */
export function checkDenortBin(
  targets: readonly Target[],
  denortBin: string | undefined,
): string | undefined {
  if (!denortBin) return undefined;
  if (targets.length !== 1) {
    throw new BuildError(
      "DENORT_BIN names one denort binary, for one target: build with --target <that target>",
    );
  }
  try {
    if (!Deno.statSync(denortBin).isFile) throw new Error();
  } catch {
    throw new BuildError(`DENORT_BIN=${denortBin} is not a file`);
  }
  return absolute(denortBin);
}

/** deno compile runs in the repo root, so a path relative to ours must be fixed first. */
function absolute(path: string): string {
  return /^([A-Za-z]:)?[\\/]/.test(path) ? path : `${Deno.cwd()}/${path}`;
}

const USAGE = `Usage: deno task compile [--target host|all|TARGET] [--out DIR] [--verbose]

Compiles roster into DIR (default dist/) as roster-<target>[.exe], plus SHA256SUMS.
Targets: ${TARGETS.join(", ")}.
DENORT_BIN=<path>: use a local denort base instead of downloading it (one target at a time).
`;

async function compileOne(
  target: Target,
  output: string,
  opts: Options,
  denortBin: string | undefined,
  bundled: { dir: string; files: readonly string[] },
): Promise<void> {
  const out = await runDeno(
    compileArgs(target, output, bundled.files),
    bundled.dir,
    denortBin ? { NO_COLOR: "1", DENORT_BIN: denortBin } : { NO_COLOR: "1" },
    opts.verbose,
  );
  const log = out.log;
  if (out.success) return;
  if (!denortBin && isBaseDownloadFailure(log)) {
    throw new BuildError(
      `cannot download the deno compile base for ${target} (no network?); ` +
        "set DENORT_BIN to a local denort binary",
    );
  }
  const via = denortBin ? ` with DENORT_BIN=${denortBin}` : "";
  const more = opts.verbose ? "" : "; run with --verbose for its output";
  throw new BuildError(`deno compile failed for ${target}${via} (exit ${out.code})${more}`);
}

/** The bundle in `dir`; its failure is the build's, in the same one line. */
async function bundleFor(dir: string, verbose: boolean): Promise<string[]> {
  try {
    return await bundle({ out: dir, verbose, help: false });
  } catch (err) {
    if (err instanceof BundleError) throw new BuildError(`bundle: ${err.message}`);
    throw err;
  }
}

export async function build(opts: Options): Promise<void> {
  const targets = resolveTargets(opts.target, Deno.build.target);
  const denortBin = checkDenortBin(targets, Deno.env.get("DENORT_BIN"));
  opts = { ...opts, out: absolute(opts.out) };
  await Deno.mkdir(opts.out, { recursive: true });
  const sumsPath = `${opts.out}/SHA256SUMS`;
  // A stale SHA256SUMS beside half-rebuilt binaries would be wrong; none beats a wrong one.
  await Deno.remove(sumsPath).catch(() => {});
  const sums: { name: string; sha256: string }[] = [];
  // Fresh for every build, outside the output: a bundle left from before cannot be shipped.
  const dir = await Deno.makeTempDir({ prefix: "roster-build-" });
  try {
    const files = await bundleFor(dir, opts.verbose);
    for (const target of targets) {
      const name = outputName(target);
      await compileOne(target, `${opts.out}/${name}`, opts, denortBin, { dir, files });
      const bytes = await Deno.readFile(`${opts.out}/${name}`);
      sums.push({ name, sha256: await sha256Hex(bytes) });
      console.log(
        `built ${opts.out}/${name} (roster ${VERSION}, ${(bytes.length / 1e6).toFixed(1)} MB)`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  const tmp = `${sumsPath}.tmp-${Deno.pid}`;
  await Deno.writeTextFile(tmp, formatSha256Sums(sums));
  await Deno.rename(tmp, sumsPath);
  console.log(`wrote ${sumsPath}`);
  // The manual page ships beside the binaries (the release uploads it): the table's, as built.
  const man = `${opts.out}/roster.1`;
  await Deno.writeTextFile(`${man}.tmp-${Deno.pid}`, manPage());
  await Deno.rename(`${man}.tmp-${Deno.pid}`, man);
  console.log(`wrote ${man}`);
}

if (import.meta.main) {
  try {
    const opts = parseOptions(Deno.args);
    if (opts.help) {
      console.log(USAGE);
    } else {
      await build(opts);
    }
  } catch (err) {
    const msg = err instanceof BuildError
      ? err.message
      : `unexpected failure: ${err instanceof Error ? err.message : err}`;
    await Deno.stderr.write(new TextEncoder().encode(`build: ${msg}\n`));
    Deno.exit(1);
  }
}
