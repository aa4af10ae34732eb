/**
 * Starts and stops a daemon: output and ring directories, the registry pump,
 * the HTTP API on the Unix socket (and on loopback TCP with a token when
 * asked), and the files that let jobs attach. Stopping flushes everything
 * and leaves a complete watch report.
 *
 * @module
 */
import { removeRingDir } from "../ffi/bindings.ts";
import { createApp } from "../routes/mod.ts";
import { DumpWriter } from "../watch/dump_writer.ts";
import { writeReport } from "../watch/report.ts";
import {
  type DaemonConfig,
  type DaemonPaths,
  daemonPaths,
  makeRingDir,
  parseListen,
  privateDir,
} from "./config.ts";
import { EventLog } from "./event_log.ts";
import { DaemonMemoryService } from "./memory_service.ts";
import { Registry } from "./registry.ts";
import { DaemonWatchService } from "./watch_service.ts";

/** The daemon's version, reported by GET /health. */
export const VERSION = "0.1.0";

/** A running daemon. */
export interface Daemon {
  paths: DaemonPaths;
  registry: Registry;
  /** Undefined when started with `eventLog: false`. */
  log?: EventLog;
  service: DaemonWatchService;
  memory: DaemonMemoryService;
  /** Resolves when the daemon has stopped. */
  stopped: Promise<void>;
  stop(): Promise<void>;
}

/** Refuses to start over a live daemon; removes a socket a killed one left. */
async function claimSocket(path: string): Promise<void> {
  try {
    Deno.lstatSync(path);
  } catch {
    return;
  }
  try {
    const conn = await Deno.connect({ transport: "unix", path });
    conn.close();
    throw new Error(
      `A daemon is already listening on ${path}: use it (./stompwatch run --daemon ${path} -- ...) or pick another --output`,
    );
  } catch (e) {
    if (e instanceof Error && e.message.startsWith("A daemon")) throw e;
    Deno.removeSync(path);
  }
}

function writePrivate(path: string, text: string): void {
  const tmp = `${path}.part`;
  Deno.writeTextFileSync(tmp, text, { mode: 0o600 });
  Deno.chmodSync(tmp, 0o600);
  Deno.renameSync(tmp, path);
}

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Starts a daemon.
 *
 * @example
 * ```ts
 * const d = await startDaemon({ outputDir: "/tmp/out", checksum: "xxh3" });
 * await d.stop();
 * ```
 */
export async function startDaemon(config: DaemonConfig): Promise<Daemon> {
  const tcp = config.listen ? parseListen(config.listen) : undefined;
  privateDir(config.outputDir);
  const ringDir = makeRingDir(config.outputDir);
  const paths = daemonPaths(config, ringDir);
  await claimSocket(paths.socket);
  const writer = new DumpWriter(paths.dumpDir);
  Deno.chmodSync(paths.dumpDir, 0o700);
  const registry = new Registry(ringDir, writer);
  const log = config.eventLog === false
    ? undefined
    : new EventLog(paths.outputDir);
  if (log) {
    registry.listen(log.onEvent);
    registry.onRound = () => log.flush();
  }
  const service = new DaemonWatchService(registry, writer, {
    outputDir: paths.outputDir,
    ringDir,
    version: VERSION,
  });
  const memory = new DaemonMemoryService(registry, log);
  registry.onAttached = (p) => memory.follow(p);
  registry.onTableChange = (p) => service.publish(p);
  registry.onFinished = () => writeReport(paths.dumpDir, service.listWatches());

  const abort = new AbortController();
  const quiet = { onListen() {}, signal: abort.signal };
  const servers: Array<{ finished: Promise<void> }> = [
    Deno.serve(
      { ...quiet, path: paths.socket },
      createApp(service, { memory }).fetch,
    ),
  ];
  Deno.chmodSync(paths.socket, 0o600);
  if (tcp) {
    const token = randomToken();
    writePrivate(`${config.outputDir}/token`, token + "\n");
    servers.push(
      Deno.serve(
        { ...quiet, ...tcp },
        createApp(service, { token, memory }).fetch,
      ),
    );
  }
  writePrivate(
    `${config.outputDir}/daemon.json`,
    JSON.stringify(paths, null, 2) + "\n",
  );
  registry.start();

  let resolveStopped!: () => void;
  const stopped = new Promise<void>((r) => resolveStopped = r);
  let stopping: Promise<void> | undefined;
  const stop = () =>
    stopping ??= (async () => {
      abort.abort();
      await Promise.allSettled(servers.map((s) => s.finished));
      await registry.stop();
      log?.close();
      writeReport(paths.dumpDir, service.listWatches());
      for (
        const p of [
          paths.socket,
          `${config.outputDir}/daemon.json`,
          `${config.outputDir}/token`,
        ]
      ) {
        try {
          Deno.removeSync(p);
        } catch { /* not there */ }
      }
      removeRingDir(ringDir);
      resolveStopped();
    })();
  return { paths, registry, log, service, memory, stopped, stop };
}

/** Stops `daemon` on SIGINT or SIGTERM. */
export function stopOnSignals(daemon: Daemon): void {
  const handler = () => {
    daemon.stop();
  };
  Deno.addSignalListener("SIGINT", handler);
  Deno.addSignalListener("SIGTERM", handler);
  daemon.stopped.then(() => {
    Deno.removeSignalListener("SIGINT", handler);
    Deno.removeSignalListener("SIGTERM", handler);
  });
}
