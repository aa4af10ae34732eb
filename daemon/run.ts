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
  readDaemonPaths,
} from "./config.ts";
import { type Daemon, startDaemon } from "./daemon.ts";
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

/**
 * The paths of the daemon behind `socket`, once it has answered: a job
 * started for a daemon that is gone would run untraced and leave a ring in
 * the dead daemon's directory.
 */
async function answeringDaemon(given: string): Promise<DaemonPaths> {
  // Absolute first: the directory of a bare `stompwatch.sock` is the cwd.
  const socket = absolute(given);
  const dir = socket.replace(/\/[^/]*$/, "") || "/";
  const paths = readDaemonPaths(dir);
  let answered = false;
  try {
    answered = (await requestSocket(socket, "GET", "/health")).status === 200;
  } catch { /* nothing listens */ }
  if (!answered) {
    throw new Error(
      `No daemon answers at ${socket}: start one with ./stompwatch daemon --output ${dir}, or leave out --daemon to start one for this job`,
    );
  }
  return paths;
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
  let daemon: Daemon | undefined;
  let paths: DaemonPaths;
  if (options.daemonSocket) {
    removeOrphanedRingDirs();
    paths = await answeringDaemon(options.daemonSocket);
  } else {
    daemon = await startDaemon({
      outputDir: options.outputDir,
      checksum: options.checksum,
    });
    paths = daemon.paths;
    say(`daemon listening on ${paths.socket}`);
  }
  let child: Deno.ChildProcess;
  try {
    child = spawnJob(options, paths);
  } catch (e) {
    await daemon?.stop();
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
  if (daemon) await daemon.stop();
  say(`dumps and watch_report.json in ${paths.dumpDir}`);
  return exitCodeOf(status);
}
