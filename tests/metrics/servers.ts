/**
 * The real monitoring components the metrics tests drive (Debian's prometheus-node-exporter
 * and prometheus), each started on 127.0.0.1 at a free port and stopped when disposed, even
 * when the test fails: `await using` them.
 */

/** A server the test started; disposing it stops it (SIGTERM, then SIGKILL) and reaps it. */
export interface Server extends AsyncDisposable {
  /** `http://127.0.0.1:<port>` */
  url: string;
  pid: number;
  /** What it wrote on stdout and stderr so far, for failure messages. */
  log(): string;
}

/** A port nothing listens on right now (the kernel's pick, released for the server to take). */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/**
 * Starts `cmd` (its arguments given the port: freePort's) with its output in
 * `<logDir>/<name>.log`, then waits until `readyPath` answers 200 over HTTP (at most
 * `timeoutMs`). A port taken meanwhile by another process (tests run beside each other, and
 * freePort releases the port before the server binds it) is given up for another, a few times.
 * A server that exits or never answers is stopped and the call throws with its log.
 */
async function startServer(
  name: string,
  cmd: string,
  args: (port: number) => string[],
  readyPath: string,
  logDir: string,
  timeoutMs = 30_000,
  pickPort = freePort,
): Promise<Server> {
  for (let tries = 1;; tries++) {
    try {
      return await startOn(name, cmd, args, pickPort(), readyPath, logDir, timeoutMs);
    } catch (err) {
      if (tries === 5 || !(err instanceof PortTaken)) throw err;
    }
  }
}

/** A server that exited because its port was taken (Go's net: "address already in use"). */
class PortTaken extends Error {}

async function startOn(
  name: string,
  cmd: string,
  argsFor: (port: number) => string[],
  port: number,
  readyPath: string,
  logDir: string,
  timeoutMs: number,
): Promise<Server> {
  const args = argsFor(port);
  const logPath = `${logDir}/${name}.log`;
  const logFile = Deno.openSync(logPath, { write: true, create: true, truncate: true });
  const child = new Deno.Command(cmd, {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Both streams into one log file, drained as they come so the pipes never fill.
  const drain = (s: ReadableStream<Uint8Array>) =>
    s.pipeTo(
      new WritableStream({
        write(chunk) {
          let off = 0;
          while (off < chunk.length) off += logFile.writeSync(chunk.subarray(off));
        },
      }),
    ).catch(() => {});
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const url = `http://127.0.0.1:${port}`;
  const log = () => {
    try {
      return Deno.readTextFileSync(logPath);
    } catch {
      return "";
    }
  };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (!exited) {
      try {
        child.kill("SIGTERM");
      } catch { /* gone already */ }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = await Promise.race([
        status.then(() => false),
        new Promise<boolean>((ok) => timer = setTimeout(() => ok(true), 5_000)),
      ]).finally(() => clearTimeout(timer));
      if (late) {
        try {
          child.kill("SIGKILL");
        } catch { /* gone just now */ }
      }
    }
    await status;
    await drained;
    logFile.close();
  };
  const server: Server = { url, pid: child.pid, log, [Symbol.asyncDispose]: stop };
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (exited) {
        const text = log();
        if (/address already in use/i.test(text)) {
          throw new PortTaken(`${name}: port ${port} taken`);
        }
        throw new Error(`${name} exited before it answered:\n${text}`);
      }
      try {
        // Bounded: a listener that takes the connection and never answers would hold it.
        const res = await fetch(url + readyPath, { signal: AbortSignal.timeout(2_000) });
        await res.body?.cancel();
        if (res.status === 200) return server;
      } catch { /* not listening yet */ }
      if (Date.now() > deadline) {
        throw new Error(`${name} did not answer ${readyPath} within ${timeoutMs} ms:\n${log()}`);
      }
      await sleep(100);
    }
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * node_exporter with only the textfile collector, reading `textfileDir`; `pickPort` chooses
 * each port it tries (a test's, to hand it a taken one).
 */
export function startNodeExporter(
  textfileDir: string,
  logDir: string,
  pickPort = freePort,
): Promise<Server> {
  return startServer(
    "node_exporter",
    "prometheus-node-exporter",
    (port) => [
      `--web.listen-address=127.0.0.1:${port}`,
      "--collector.disable-defaults",
      "--collector.textfile",
      `--collector.textfile.directory=${textfileDir}`,
    ],
    "/metrics",
    logDir,
    undefined,
    pickPort,
  );
}

/**
 * A Prometheus server scraping `target` (host:port) every second, with its configuration
 * and storage under `dir`, and `ruleFiles` loaded.
 */
export function startPrometheus(
  target: string,
  dir: string,
  ruleFiles: string[] = [],
): Promise<Server> {
  const config = [
    "global:",
    "  scrape_interval: 1s",
    "  evaluation_interval: 1s",
    ...(ruleFiles.length
      ? ["rule_files:", ...ruleFiles.map((f) => `  - ${JSON.stringify(f)}`)]
      : []),
    "scrape_configs:",
    "  - job_name: node",
    "    static_configs:",
    `      - targets: [${JSON.stringify(target)}]`,
    "        labels: {role: runner}",
    "",
  ].join("\n");
  Deno.writeTextFileSync(`${dir}/prometheus.yml`, config);
  return startServer(
    "prometheus",
    "prometheus",
    (port) => [
      `--config.file=${dir}/prometheus.yml`,
      `--storage.tsdb.path=${dir}/data`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    "/-/ready",
    dir,
    60_000,
  );
}

/** One sample of the text exposition format: name, labels, value. */
export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses the sample lines of a text exposition (comments skipped), unescaping label values:
 * enough to read back what node_exporter serves.
 */
export function parseExposition(text: string): ParsedSample[] {
  const out: ParsedSample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( \d+)?$/.exec(line);
    if (!m) throw new Error(`Not a sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    const body = m[3] ?? "";
    const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;
    let lm: RegExpExecArray | null;
    let at = 0;
    while ((lm = re.exec(body)) !== null) {
      labels[lm[1]] = lm[2].replace(/\\(.)/g, (_, c) => c === "n" ? "\n" : c);
      at = re.lastIndex;
    }
    if (at !== body.length) throw new Error(`Bad labels: ${JSON.stringify(line)}`);
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

/** The value of the one sample of `name` whose labels include `labels`; undefined if none. */
export function valueOf(
  samples: ParsedSample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const hits = samples.filter((s) =>
    s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)
  );
  if (hits.length > 1) throw new Error(`${hits.length} samples of ${name} match`);
  return hits[0]?.value;
}

/** promtool check metrics on `text`: its exit code and complaints. */
export async function promtoolCheck(text: string): Promise<{ code: number; out: string }> {
  const child = new Deno.Command("promtool", {
    args: ["check", "metrics"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(text));
  await w.close();
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, out: dec.decode(out.stdout) + dec.decode(out.stderr) };
}
