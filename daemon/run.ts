/**
 * `stompwatch run`: starts a job with the hook preloaded and
 * ASCEND_LAUNCH_BLOCKING=1, reporting to a daemon given with --daemon or to
 * one of its own that lives as long as the job. Prints each watch's verdict
 * when the job ends and exits with the job's exit code.
 *
 * @module
 */
import type { ProcessMemory } from "../analysis/memory_api.ts";
import { formatFluctuation, formatLeakSummary } from "../analysis/leaks/mod.ts";
import { formatVerdictLine } from "../watch/report.ts";
import type { ProcessInfo, WatchInfo } from "../watch/types.ts";
import { listRings } from "../ffi/bindings.ts";
import {
  absolute,
  type DaemonPaths,
  jobEnv,
  outputDirectory,
  type PythonOptions,
  readDaemonPaths,
} from "./config.ts";
import { type Daemon, OutputHeldError, startDaemon } from "./daemon.ts";
import { removeOrphanedRingDirs } from "./ring_dirs.ts";
import { requestSocket } from "./socket_client.ts";

/** What `run` was asked to do, validated. */
export interface RunOptions {
  command: string[];
  watch?: string;
  outputDir: string;
  /** Socket of a running daemon; none means start our own. */
  daemonSocket?: string;
  checksum: "xxh3" | "crc64-msmemscope";
  /** For Python jobs: msMemScope's names, events, call stacks. */
  python?: PythonOptions;
}

const WAIT_FOR_DRAIN_MS = 10_000;

function say(line: string): void {
  console.error(`stompwatch: ${line}`);
}

function spawnJob(
  options: RunOptions,
  paths: DaemonPaths,
): Deno.ChildProcess {
  const user = Deno.env.get("ASCEND_LAUNCH_BLOCKING");
  if (user !== undefined && user !== "1") {
    say(
      `ASCEND_LAUNCH_BLOCKING=${user} overridden with 1: dumps must bracket each op, so ops must run synchronously`,
    );
  }
  const env = jobEnv({ ...paths, checksum: options.checksum }, {
    watch: options.watch,
    ldPreload: Deno.env.get("LD_PRELOAD"),
    ...options.python,
    pythonPath: Deno.env.get("PYTHONPATH"),
  });
  try {
    return new Deno.Command(options.command[0], {
      args: options.command.slice(1),
      env,
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
  } catch (e) {
    throw new Error(
      `Cannot start the job: ${options.command[0]}: ${(e as Error).message}`,
    );
  }
}

/** Sends SIGINT/SIGTERM on to the job while it runs. */
function forwardSignals(child: Deno.ChildProcess): () => void {
  const handlers = (["SIGINT", "SIGTERM"] as const).map((sig) => {
    const h = () => {
      try {
        child.kill(sig);
      } catch { /* already gone */ }
    };
    Deno.addSignalListener(sig, h);
    return [sig, h] as const;
  });
  return () =>
    handlers.forEach(([sig, h]) => Deno.removeSignalListener(sig, h));
}

function exitCodeOf(status: Deno.CommandStatus): number {
  const numbers: Record<string, number> = {
    SIGINT: 2,
    SIGKILL: 9,
    SIGTERM: 15,
    SIGSEGV: 11,
    SIGABRT: 6,
  };
  if (status.signal) return 128 + (numbers[status.signal] ?? 1);
  return status.code;
}

/** Whether the job made a ring (it may exit before the daemon's next scan). */
function hasRing(paths: DaemonPaths, pid: number): boolean {
  return listRings(paths.ringDir)?.includes(`${pid}.ring`) ?? false;
}

async function ownDaemonVerdicts(
  daemon: Daemon,
  pid: number,
): Promise<WatchInfo[]> {
  const deadline = Date.now() + WAIT_FOR_DRAIN_MS;
  while (Date.now() < deadline) {
    daemon.registry.scan();
    const p = daemon.registry.processes.get(pid);
    if (p ? p.finished : !hasRing(daemon.paths, pid)) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  return daemon.service.listWatches().filter((w) => w.pid === pid);
}

async function sharedDaemonVerdicts(
  paths: DaemonPaths,
  pid: number,
): Promise<WatchInfo[] | undefined> {
  const socket = paths.socket;
  const deadline = Date.now() + WAIT_FOR_DRAIN_MS;
  try {
    while (Date.now() < deadline) {
      const r = await requestSocket(socket, "GET", "/processes");
      const procs = (r.body as { processes?: ProcessInfo[] }).processes ?? [];
      const me = procs.find((p) => p.pid === pid);
      if (me ? me.finished : !hasRing(paths, pid)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const r = await requestSocket(socket, "GET", "/watches");
    return ((r.body as { watches?: WatchInfo[] }).watches ?? []).filter((w) =>
      w.pid === pid
    );
  } catch {
    return undefined;
  }
}

async function sharedDaemonMemory(
  paths: DaemonPaths,
  pid: number,
): Promise<ProcessMemory[] | undefined> {
  try {
    const [leaks, fluctuation] = await Promise.all([
      requestSocket(paths.socket, "GET", `/leaks?pid=${pid}`),
      requestSocket(paths.socket, "GET", `/fluctuation?pid=${pid}`),
    ]);
    type Answer = { processes?: ProcessMemory[] };
    const s = (leaks.body as Answer).processes?.[0];
    const f = (fluctuation.body as Answer).processes?.[0];
    return s ? [{ ...s, fluctuation: f?.fluctuation ?? [] }] : [];
  } catch {
    return undefined;
  }
}

/** Whether a daemon answers GET /health at `socket`. */
async function answers(socket: string): Promise<boolean> {
  try {
    return (await requestSocket(socket, "GET", "/health")).status === 200;
  } catch {
    return false; // nothing listens
  }
}

/**
 * The paths of the daemon behind `socket`, once it has answered: a job
 * started for a daemon that is gone would run untraced and leave a ring in
 * the dead daemon's directory. `orElse` ends the refusal with the other
 * way out the caller offers.
 *
 * @example
 * ```ts
 * const paths = await answeringDaemon("/tmp/out/stompwatch.sock");
 * paths.ringDir; // where the job's ring goes
 * ```
 */
export async function answeringDaemon(
  given: string,
  options: { orElse?: string } = {},
): Promise<DaemonPaths> {
  // Absolute first: the directory of a bare `stompwatch.sock` is the cwd.
  const socket = absolute(given);
  const dir = socket.replace(/\/[^/]*$/, "") || "/";
  const paths = readDaemonPaths(dir);
  if (!await answers(socket)) {
    const orElse = options.orElse ??
      ", or leave out --daemon to start one for this job";
    throw new Error(
      `No daemon answers at ${socket}: start one with ./stompwatch daemon --output ${dir}${orElse}`,
    );
  }
  return paths;
}

/** How long `run` waits for a daemon that holds OUT but is still starting. */
const STARTING_DAEMON_MS = 5_000;

/**
 * The daemon that serves OUT for this job: the live one already there
 * (another `run`'s or a `stompwatch daemon`), or one of our own. Several
 * `run`s on one OUT so share one daemon; refused only when OUT is held by
 * a daemon that does not answer.
 */
async function daemonFor(
  options: RunOptions,
): Promise<{ daemon?: Daemon; paths: DaemonPaths }> {
  const socket = `${options.outputDir}/stompwatch.sock`;
  const attach = () => {
    const paths = readDaemonPaths(options.outputDir);
    say(
      `a daemon already serves ${options.outputDir}: the job reports to it, as with --daemon ${socket}`,
    );
    removeOrphanedRingDirs();
    return { paths };
  };
  if (await answers(socket)) return attach();
  try {
    const daemon = await startDaemon({
      outputDir: options.outputDir,
      checksum: options.checksum,
    });
    say(`daemon listening on ${daemon.paths.socket}`);
    return { daemon, paths: daemon.paths };
  } catch (e) {
    if (!(e instanceof OutputHeldError)) throw e;
  }
  // Held: its daemon may be starting still (the lock comes before the socket).
  const deadline = Date.now() + STARTING_DAEMON_MS;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    if (await answers(socket)) return attach();
  }
  throw new Error(
    `Cannot use --output ${options.outputDir}: a daemon holds ${options.outputDir}/daemon.lock but does not answer at ${socket}; wait for it, stop it, or pick another --output`,
  );
}

/**
 * The lock every `run` on OUT takes shared while its job runs and its
 * verdicts are read; the `run` whose daemon serves OUT takes it exclusive
 * before stopping that daemon, so jobs of other `run`s that attached to it
 * finish traced.
 */
async function runsLock(outputDir: string): Promise<Deno.FsFile> {
  const file = await Deno.open(`${outputDir}/run.lock`, {
    read: true,
    write: true,
    create: true,
    mode: 0o600,
  });
  await file.lock(false);
  return file;
}

/** Removes the runs lock of an OUT made by this `run` and left empty by it. */
function removeRunsLock(outputDir: string): void {
  try {
    Deno.removeSync(`${outputDir}/run.lock`);
    Deno.removeSync(outputDir); // refuses a directory that holds anything
  } catch { /* used by another run, or not empty */ }
}

/** Stops our own daemon once no other `run`'s job reports to it. */
async function stopWhenAlone(
  daemon: Daemon | undefined,
  shared: Deno.FsFile | undefined,
): Promise<void> {
  if (daemon) {
    if (shared && !shared.tryLockSync(true)) {
      say(
        `waiting for the jobs of other runs that report to this daemon (${daemon.paths.socket}) before stopping it`,
      );
      await shared.lock(true);
    }
    await daemon.stop();
  }
  shared?.close();
}

/**
 * Refuses, before the job starts, an OOM_SNAPSHOT_PATH the job could not
 * write its OOM snapshots into, with torch_npu's own words.
 */
function checkOomPath(): void {
  const mode = Deno.env.get("OOM_SNAPSHOT_ENABLE");
  const dir = Deno.env.get("OOM_SNAPSHOT_PATH");
  if ((mode !== "1" && mode !== "2") || !dir) return;
  let isDir = false;
  try {
    isDir = Deno.statSync(dir).isDirectory;
  } catch { /* missing or unreadable */ }
  if (!isDir) {
    throw new Error(
      `OOM_SNAPSHOT_PATH is invalid. ${dir}: not an existing directory; create it, or unset OOM_SNAPSHOT_PATH to write into the job's working directory`,
    );
  }
}

/**
 * Runs the job to completion; returns its exit code.
 *
 * @example
 * ```ts
 * const code = await runJob({ command: ["./train"], outputDir: "/tmp/out", checksum: "xxh3" });
 * ```
 */
export async function runJob(options: RunOptions): Promise<number> {
  checkOomPath();
  let daemon: Daemon | undefined;
  let paths: DaemonPaths;
  let shared: Deno.FsFile | undefined;
  if (options.daemonSocket) {
    removeOrphanedRingDirs();
    paths = await answeringDaemon(options.daemonSocket);
  } else {
    const madeOut = outputDirectory(options.outputDir);
    try {
      shared = await runsLock(options.outputDir);
      ({ daemon, paths } = await daemonFor(options));
    } catch (e) {
      shared?.close();
      if (madeOut) removeRunsLock(options.outputDir);
      throw e;
    }
  }
  let child: Deno.ChildProcess;
  try {
    child = spawnJob(options, paths);
  } catch (e) {
    await stopWhenAlone(daemon, shared);
    throw e;
  }
  const unforward = forwardSignals(child);
  const status = await child.status;
  unforward();

  const watches = daemon
    ? await ownDaemonVerdicts(daemon, child.pid)
    : await sharedDaemonVerdicts(paths, child.pid);
  if (watches === undefined) {
    say(`the daemon at ${paths.socket} did not answer; no verdicts to print`);
  } else {
    for (const w of watches) say(formatVerdictLine(w));
  }
  const memory = daemon
    ? daemon.memory.memory().filter((m) => m.pid === child.pid)
    : await sharedDaemonMemory(paths, child.pid);
  for (const m of memory ?? []) {
    for (const line of formatLeakSummary(m.suspects)) console.error(line);
    for (const line of formatFluctuation(m.fluctuation)) say(line);
  }
  // A shared daemon writes the report itself when it has drained the job.
  await stopWhenAlone(daemon, shared);
  say(`dumps and watch_report.json in ${paths.dumpDir}`);
  return exitCodeOf(status);
}
