/**
 * The single point where the process backend for this OS is chosen. Each OS module is
 * loaded only on its own OS, so FFI code never loads on Linux and start-up stays cheap.
 */
import { lazyModule } from "../lazy.ts";
import type { ProcessBackend } from "./types.ts";

let selected: Promise<ProcessBackend> | undefined;

/** The backend for this machine, chosen once per process. */
export function processBackend(): Promise<ProcessBackend> {
  selected ??= select(Deno.build.os);
  return selected;
}

/** A backend's module, loaded on its own OS only (src/lazy.ts). */
function backend<M>(specifier: string): Promise<M> {
  return lazyModule<M>(specifier, (s) => import(s))();
}

async function select(os: typeof Deno.build.os): Promise<ProcessBackend> {
  switch (os) {
    case "linux":
      return (await backend<typeof import("./linux.ts")>("./linux.ts")).linuxBackend();
    case "darwin":
      return (await backend<typeof import("./darwin.ts")>("./darwin.ts")).darwinBackend() ??
        await psFallback();
    case "freebsd":
      return (await backend<typeof import("./freebsd.ts")>("./freebsd.ts")).freebsdBackend() ??
        await psFallback();
    case "windows":
      return (await backend<typeof import("./windows.ts")>("./windows.ts")).windowsBackend() ??
        unsupportedBackend();
    default:
      return await psFallback();
  }
}

async function psFallback(): Promise<ProcessBackend> {
  return (await backend<typeof import("./ps.ts")>("./ps.ts")).psBackend();
}

/** Where nothing can probe a process: every answer is `unsupported`, never a guess. */
function unsupportedBackend(): ProcessBackend {
  return {
    name: "none",
    probe: () => ({ kind: "unsupported" }),
    bootId: () => null,
    command: () => ({ exe: null, argv: null }),
    compareTokens: () => "uncertain",
  } satisfies ProcessBackend;
}
