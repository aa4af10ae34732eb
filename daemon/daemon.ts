/**
 * Starts and stops a daemon: output and ring directories, the registry pump,
 * the HTTP API on the Unix socket (and on loopback TCP with a token when
 * asked), and the files that let jobs attach. Stopping flushes everything
 * and leaves a complete watch report.
 *
 * @module
 */
import { deviceName } from "../analysis/snapshot/oom.ts";
import { createApp } from "../routes/mod.ts";
import { DumpWriter } from "../watch/dump_writer.ts";
import { IoProblems } from "../watch/io_problems.ts";
import { WatchReportFile } from "../watch/report.ts";
import { RETRY_EVERY_MS } from "../watch/row_file.ts";
import {
  checkSocketPath,
  type DaemonConfig,
  type DaemonPaths,
  daemonPaths,
  outputDirectory,
  parseListen,
} from "./config.ts";
import { EventLog } from "./event_log.ts";
import { type Guardian, repairRowFiles, startGuardian } from "./guardian.ts";
import { DaemonMemoryService } from "./memory_service.ts";
import { OomSnapshots } from "./oom_snapshots.ts";
import { Registry } from "./registry.ts";
import {
  makeRingDir,
  removeOrphanedRingDirs,
  removeOwnRingDir,
} from "./ring_dirs.ts";
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
  /** Files the daemon could not write (listed by GET /health). */
  problems: IoProblems;
  /** OOM snapshots written; undefined without an event log. */
  oom?: OomSnapshots;
  /** Resolves when the daemon has stopped. */
  stopped: Promise<void>;
  stop(): Promise<void>;
}

/**
 * OUT is held by another live daemon (it holds `OUT/daemon.lock`): `run`
 * attaches to it rather than failing.
 */
export class OutputHeldError extends Error {
  /** The socket the daemon that holds OUT serves. */
  readonly socket: string;
  constructor(message: string, socket: string) {
    super(message);
    this.socket = socket;
  }
}

/**
 * Makes OUT this daemon's: an exclusive flock on `OUT/daemon.lock`, held
 * until the daemon stops or dies (the kernel drops it then). A live
 * daemon, busy or not, holds it, so a second one is refused before it
 * touches the socket or any file; a lock file a stopped daemon removed
 * while another one opened it is locked again under its new inode.
 */
function lockOutput(outputDir: string, socket: string): Deno.FsFile {
  const path = `${outputDir}/daemon.lock`;
  for (;;) {
    let file: Deno.FsFile;
    try {
      file = Deno.openSync(path, {
        read: true,
        write: true,
        create: true,
        mode: 0o600,
      });
    } catch (e) {
      if (e instanceof Deno.errors.NotCapable) throw e; // main.ts says it
      throw new Error(
        `Cannot create ${path}: ${
          (e as Error).message
        }; give an --output directory you can write`,
      );
    }
    let ours = false;
    try {
      ours = file.tryLockSync(true);
      if (ours && file.statSync().ino === Deno.statSync(path).ino) return file;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) {
        file.close();
        throw e;
      }
    }
    file.close();
    if (!ours) {
      throw new OutputHeldError(
        `A daemon is already listening on ${socket} (it holds ${path}): use it (./stompwatch run --daemon ${socket} -- ...) or pick another --output`,
        socket,
      );
    }
  }
}

/** Removes a socket a killed daemon left; only the holder of OUT's lock calls this. */
function removeStaleSocket(path: string): void {
  try {
    Deno.removeSync(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
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
// async, though nothing in it waits: a failed start rejects, as callers expect.
// deno-lint-ignore require-await
export async function startDaemon(config: DaemonConfig): Promise<Daemon> {
  const tcp = config.listen ? parseListen(config.listen) : undefined;
  checkSocketPath(config.outputDir);
  // What a failed start made, undone in reverse order.
  const undo: Array<() => void> = [];
  const madeOut = outputDirectory(config.outputDir);
  if (madeOut) undo.push(() => removeIfEmpty(config.outputDir));
  // Only once OUT is accepted: never scan a directory that is refused.
  removeOrphanedRingDirs(config.outputDir);
  try {
    const socket = `${config.outputDir}/stompwatch.sock`;
    const lock = lockOutput(config.outputDir, socket);
    undo.push(() => lock.close());
    undo.push(() => Deno.removeSync(`${config.outputDir}/daemon.lock`));
    removeStaleSocket(socket);
    const ringDir = makeRingDir(config.outputDir);
    undo.push(() => removeOwnRingDir(ringDir));
    const paths = daemonPaths(config, ringDir);
    // OUT is ours now: what a daemon killed with its guardian left cut is mended.
    for (const path of repairRowFiles(config.outputDir, paths.dumpDir)) {
      console.error(
        `stompwatch: ${path} ended in part of a row (its daemon was killed mid-write): cut back to its last whole row`,
      );
    }
    const madeDumps = !exists(paths.dumpDir);
    const guardian = startGuardian(config.outputDir);
    undo.push(() => void guardian?.close());
    const problems = new IoProblems();
    const onCommitted = guardian?.committed;
    const writer = new DumpWriter(paths.dumpDir, { problems, onCommitted });
    if (madeDumps) undo.push(() => removeIfEmpty(paths.dumpDir));
    const report = new WatchReportFile(paths.dumpDir, problems);
    return serve(config, paths, {
      tcp,
      guardian,
      lock,
      problems,
      writer,
      report,
      undo,
    });
  } catch (e) {
    for (const step of undo.reverse()) {
      try {
        step();
      } catch { /* best effort: the first error is the one to tell */ }
    }
    throw e;
  }
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function removeIfEmpty(dir: string): void {
  try {
    Deno.removeSync(dir); // refuses a directory that holds anything
  } catch { /* not empty, or gone */ }
}

interface Made {
  tcp?: { hostname: string; port: number };
  guardian?: Guardian;
  /** OUT's lock (see lockOutput): released last when the daemon stops. */
  lock: Deno.FsFile;
  problems: IoProblems;
  writer: DumpWriter;
  report: WatchReportFile;
  undo: Array<() => void>;
}

function serve(
  config: DaemonConfig,
  paths: DaemonPaths,
  { tcp, guardian, lock, problems, writer, report, undo }: Made,
): Daemon {
  const registry = new Registry(paths.ringDir, writer);
  const log = config.eventLog === false
    ? undefined
    : new EventLog(paths.outputDir, new Date(), {
      problems,
      onCommitted: guardian?.committed,
    });
  if (log) {
    registry.listen(log.onEvent);
    registry.onRound = () => log.flush();
  }
  const oom = log ? new OomSnapshots(registry, log) : undefined;
  if (oom) {
    registry.listen(oom.onEvent);
    oom.onWritten = (f) =>
      console.error(
        f.error
          ? `stompwatch: ${f.error}`
          : `stompwatch: out of memory on device ${
            deviceName(f.device)
          } in pid ${f.pid}: wrote ${f.snapshot} and ${f.usage}`,
      );
  }
  const service = new DaemonWatchService(registry, writer, {
    outputDir: paths.outputDir,
    ringDir: paths.ringDir,
    version: VERSION,
    ioProblems: () => problems.list(),
  });
  const memory = new DaemonMemoryService(registry, log);
  registry.onAttached = (p) => memory.follow(p);
  registry.onTableChange = (p) => service.publish(p);
  registry.onFinished = () => report.write(service.listWatches());

  const abort = new AbortController();
  const quiet = { onListen() {}, signal: abort.signal };
  const servers: Array<{ finished: Promise<void> }> = [];
  undo.push(() => abort.abort());
  servers.push(Deno.serve(
    { ...quiet, path: paths.socket },
    createApp(service, { memory }).fetch,
  ));
  undo.push(() => Deno.removeSync(paths.socket));
  Deno.chmodSync(paths.socket, 0o600);
  if (tcp) {
    const token = randomToken();
    try {
      servers.push(
        Deno.serve(
          { ...quiet, ...tcp },
          createApp(service, { token, memory }).fetch,
        ),
      );
    } catch (e) {
      if (e instanceof Deno.errors.AddrInUse) {
        throw new Error(
          `Cannot listen on ${config.listen}: the port is in use; pick another --listen port`,
        );
      }
      throw e;
    }
    writePrivate(`${config.outputDir}/token`, token + "\n");
  }
  writePrivate(
    `${config.outputDir}/daemon.json`,
    JSON.stringify(paths, null, 2) + "\n",
  );
  registry.start();
  // Files that failed are tried again even when no job writes.
  const retry = setInterval(() => {
    log?.flush();
    writer.retry();
    report.retry();
  }, RETRY_EVERY_MS);

  let resolveStopped!: () => void;
  const stopped = new Promise<void>((r) => resolveStopped = r);
  let stopping: Promise<void> | undefined;
  const stop = () =>
    stopping ??= (async () => {
      abort.abort();
      clearInterval(retry);
      await Promise.allSettled(servers.map((s) => s.finished));
      await registry.stop();
      await oom?.settled();
      writer.close();
      log?.close();
      report.write(service.listWatches());
      // GET /health counted what was lost: it is gone now, so say it here.
      problems.sayLosses();
      await guardian?.close();
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
      removeOwnRingDir(paths.ringDir);
      // Removed while held: a daemon that opened it meanwhile sees that
      // its inode is no longer OUT's lock and takes the new one.
      try {
        Deno.removeSync(`${config.outputDir}/daemon.lock`);
      } catch { /* not there */ }
      lock.close();
      resolveStopped();
    })();
  return {
    paths,
    registry,
    log,
    service,
    memory,
    problems,
    oom,
    stopped,
    stop,
  };
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
