/**
 * Daemon configuration and the places it owns on disk: the output directory
 * (0700), the ring directory in /dev/shm (0700, one per daemon), the Unix
 * socket, the bearer token for TCP, and `daemon.json`, which tells `run`
 * and `env` how to attach a job.
 *
 * @module
 */
import { HOOK_LIBRARY, makePrivateDir } from "../ffi/bindings.ts";

/** What the daemon is started with. */
export interface DaemonConfig {
  outputDir: string;
  /** `host:port` on loopback, for TCP next to the socket. */
  listen?: string;
  checksum: "xxh3" | "crc64-msmemscope";
  /** Write the event log (default true; benchmarks turn it off for a baseline). */
  eventLog?: boolean;
}

/** Where the daemon's files are, written to OUT/daemon.json. */
export interface DaemonPaths {
  outputDir: string;
  socket: string;
  ringDir: string;
  dumpDir: string;
  hookLibrary: string;
  checksum: DaemonConfig["checksum"];
  pid: number;
}

/**
 * Resolves `dir` against the working directory.
 *
 * @example
 * ```ts
 * absolute("stompwatch_out"); // "/home/me/stompwatch_out"
 * ```
 */
export function absolute(dir: string): string {
  if (dir.startsWith("/")) return dir.replace(/\/+$/, "") || "/";
  return `${Deno.cwd()}/${dir}`.replace(/\/\.?\/?$/, "").replace(
    /\/\.\//g,
    "/",
  );
}

/** Creates `dir` with mode 0700, tightening it if it already existed. */
export function privateDir(dir: string): void {
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  Deno.chmodSync(dir, 0o700);
}

/**
 * Parses `--listen`: loopback only (any 127.x.y.z, localhost, [::1]), so no
 * other machine can reach the API. The launcher grants exactly these hosts.
 *
 * @example
 * ```ts
 * parseListen("127.0.0.1:7070"); // { hostname: "127.0.0.1", port: 7070 }
 * ```
 */
export function parseListen(value: string): { hostname: string; port: number } {
  // Octets 0-255 without leading zeros: the launcher's grant uses the same pattern.
  const m =
    /^(\[::1\]|localhost|127(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}):(\d{1,5})$/
      .exec(value);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port < 1 || port > 65535) {
    throw new Error(
      `Invalid --listen value: ${value}; use 127.0.0.1:PORT (or another 127.x.y.z, localhost:PORT, [::1]:PORT) with a port from 1 to 65535: the daemon listens on loopback only`,
    );
  }
  return { hostname: m[1] === "[::1]" ? "::1" : m[1], port };
}

/** Makes the ring directory: in /dev/shm when there is one, so rings never hit the disk. */
export function makeRingDir(outputDir: string): string {
  const tag = `${Deno.pid}.${crypto.randomUUID().slice(0, 8)}`;
  const shm = `/dev/shm/stompwatch.${tag}`;
  if (makePrivateDir(shm)) return shm;
  const dir = `${outputDir}/rings.${tag}`;
  if (!makePrivateDir(dir)) {
    throw new Error(
      `Cannot create the ring directory: ${dir}; check that ${outputDir} is writable`,
    );
  }
  return dir;
}

/** Paths of a daemon started with `outputDir`. */
export function daemonPaths(
  config: DaemonConfig,
  ringDir: string,
): DaemonPaths {
  return {
    outputDir: config.outputDir,
    socket: `${config.outputDir}/stompwatch.sock`,
    ringDir,
    dumpDir: `${config.outputDir}/watch_dump`,
    hookLibrary: HOOK_LIBRARY,
    checksum: config.checksum,
    pid: Deno.pid,
  };
}

/** Reads OUT/daemon.json of a running daemon. */
export function readDaemonPaths(outputDir: string): DaemonPaths {
  const path = `${outputDir}/daemon.json`;
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    throw new Error(
      `No daemon found: ${path} does not exist; start one with ./stompwatch daemon --output ${outputDir}`,
    );
  }
  return JSON.parse(text) as DaemonPaths;
}

/**
 * The environment a job needs to report to the daemon at `paths`.
 *
 * @example
 * ```ts
 * jobEnv(paths, { watch: "Fill:0,Mul" });
 * ```
 */
export function jobEnv(
  paths: DaemonPaths,
  options: { watch?: string; ldPreload?: string } = {},
): Record<string, string> {
  const preload = options.ldPreload
    ? `${paths.hookLibrary}:${options.ldPreload}`
    : paths.hookLibrary;
  const env: Record<string, string> = {
    LD_PRELOAD: preload,
    STOMPWATCH_RING_DIR: paths.ringDir,
    STOMPWATCH_CHECKSUM: paths.checksum,
    ASCEND_LAUNCH_BLOCKING: "1",
  };
  if (options.watch) env.STOMPWATCH_WATCH = options.watch;
  return env;
}
