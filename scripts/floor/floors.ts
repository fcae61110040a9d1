/**
 * The benchmark's floor programs: the C ones built with the system compiler, the Deno FFI ones
 * started the way roster is, and the checks that a floor answers as roster does (a floor that
 * calls live records dead does less work, and its ratio means nothing).
 */
import { V8_FLAGS } from "../build.ts";

const FLOOR_SRC = new URL("./", import.meta.url).pathname;

/** The built programs' paths. */
export interface Floors {
  list: string;
  prune: string;
  sleepers: string;
  cputime: string;
}

/** Builds the C floor programs into `out`; why not (a string) where there is no C compiler. */
export async function buildFloors(out: string): Promise<Floors | string> {
  const cc = Deno.env.get("CC") ?? "cc";
  for (const name of ["list", "prune", "sleepers", "cputime"]) {
    try {
      const r = await new Deno.Command(cc, {
        args: ["-O2", "-o", `${out}/${name}`, `${FLOOR_SRC}${name}.c`],
        stdout: "null",
        stderr: "piped",
      }).output();
      if (!r.success) return `${cc} failed: ${new TextDecoder().decode(r.stderr).trim()}`;
    } catch {
      return `no C compiler (${cc})`;
    }
  }
  return {
    list: `${out}/list`,
    prune: `${out}/prune`,
    sleepers: `${out}/sleepers`,
    cputime: `${out}/cputime`,
  };
}

/** The Deno FFI floor for `list` or `prune` over a host directory, under roster's flags. */
export function ffiFloor(program: "list" | "prune", hostDir: string): string[] {
  return [Deno.execPath(), "run", "-A", ...V8_FLAGS, `${FLOOR_SRC}${program}_ffi.ts`, hostDir];
}

/**
 * The I/O floor of `roster activity --tool-start <toolId> --pid <pid>` over a host directory
 * (activity_floor.ts), under roster's flags.
 */
export function activityFloor(hostDir: string, pid: number, toolId: string): string[] {
  return [
    Deno.execPath(),
    "run",
    "-A",
    ...V8_FLAGS,
    `${FLOOR_SRC}activity_floor.ts`,
    hostDir,
    `${pid}`,
    toolId,
  ];
}

/**
 * How many records a listing calls alive: roster's `list --all --json` and the list floors
 * alike write `"liveness": "alive"` once per live record.
 */
export function aliveCount(listing: string): number {
  return listing.split('"liveness": "alive"').length - 1;
}

/** A command's stdout; throws, naming it, when it fails. */
export async function stdoutOf(cmd: string[]): Promise<string> {
  const out = await new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`${cmd.join(" ")} exited ${out.code}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout);
}

/** The record files (`<pid>.json`) in a host directory, sorted. */
export function recordNames(hostDir: string): string[] {
  const names: string[] = [];
  for (const e of Deno.readDirSync(hostDir)) if (/^\d+\.json$/.test(e.name)) names.push(e.name);
  return names.sort();
}
