/**
 * Daemon configuration and the places it owns on disk: the output directory
 * (0700, and never loosened or tightened once it exists), the ring
 * directory in /dev/shm (see `ring_dirs.ts`), the Unix socket, the bearer
 * token for TCP, and `daemon.json`, which tells `run` and `env` how to
 * attach a job.
 *
 * @module
 */
import { HOOK_LIBRARY } from "../ffi/bindings.ts";

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

/** The most bytes a Unix socket path may have (sun_path less its NUL). */
export const MAX_SOCKET_PATH_BYTES = 107;

/**
 * Refuses an output directory whose socket, `OUT/stompwatch.sock`, is
 * longer than a Unix socket path may be: said before anything is made.
 *
 * @throws when the socket path is too long.
 * @example
 * ```ts
 * checkSocketPath("/tmp/stompwatch_out"); // fine
 * ```
 */
export function checkSocketPath(outputDir: string): void {
  const socket = `${outputDir}/stompwatch.sock`;
  const bytes = new TextEncoder().encode(socket).length;
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    throw new Error(
      `Cannot use --output ${outputDir}: its socket path ${socket} is ${bytes} bytes, more than the ${MAX_SOCKET_PATH_BYTES} a Unix socket path may have; use a shorter directory`,
    );
  }
}

/**
 * Makes the output directory (0700) when it does not exist; returns whether
 * it was made here. An existing directory is used as it is, and only when
 * no one but its owner can enter it: dumps, logs and the token must stay
 * private, and a directory that is not ours (`/tmp`) is not ours to chmod.
 *
 * @throws when `dir` is not a directory, or others can enter or read it.
 * @example
 * ```ts
 * outputDirectory("/tmp/stompwatch_out"); // true the first time
 * ```
 */
export function outputDirectory(dir: string): boolean {
  let info: Deno.FileInfo | undefined;
  try {
    info = Deno.statSync(dir);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) throw e;
    if (!(e instanceof Deno.errors.NotFound)) {
      throw new Error(
        `Cannot use --output ${dir}: ${(e as Error).message}`,
      );
    }
  }
  if (!info) {
    // The parents too: mkdir gives 0700 less the umask, never more.
    try {
      Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (e) {
      if (e instanceof Deno.errors.NotCapable) throw e; // main.ts says it
      throw new Error(
        `Cannot create --output ${dir}: ${
          (e as Error).message
        }; give a directory you can write`,
      );
    }
    return true;
  }
  if (!info.isDirectory) {
    throw new Error(
      `Cannot use --output ${dir}: it is not a directory; give a directory (stompwatch makes it when it does not exist)`,
    );
  }
  const mode = (info.mode ?? 0) & 0o7777;
  if (mode & 0o077) {
    throw new Error(
      `Cannot use --output ${dir}: other users can open it (mode ${
        mode.toString(8).padStart(4, "0")
      }) and would read the dumps, logs and token; give a new directory (stompwatch makes it 0700) or run chmod 700 ${dir} yourself`,
    );
  }
  return false;
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

/** The Python client's folder (`import stompwatch`), put on a job's PYTHONPATH. */
export const PYTHON_CLIENT = new URL("../clients/python", import.meta.url)
  .pathname.replace(/\/$/, "");
/** Folder of the `msmemscope` package that maps msMemScope's API onto ours. */
export const MSMEMSCOPE_SHIM = `${PYTHON_CLIENT}/msmemscope_shim`;
/** Folder of the `sitecustomize` that starts the client in every Python job. */
export const PYTHON_AUTOSTART = `${PYTHON_CLIENT}/autostart`;

/** What a Python job records, from `run --events/--call-stack/--as-msmemscope`. */
export interface PythonOptions {
  /** The user's PYTHONPATH, kept after ours. */
  pythonPath?: string;
  /** `--as-msmemscope`: `import msmemscope` finds our shim. */
  asMsmemscope?: boolean;
  /** `--events`, msMemScope's list (`alloc,free,launch,access`). */
  events?: string;
  /** `--call-stack`, e.g. `python:10`. */
  callStack?: string;
}

/**
 * The environment a job needs to report to the daemon at `paths`.
 *
 * @example
 * ```ts
 * import { jobEnv, readDaemonPaths } from "./config.ts";
 * const env = jobEnv(readDaemonPaths("stompwatch_out"), { watch: "Fill:0,Mul" });
 * env.ASCEND_LAUNCH_BLOCKING; // "1"
 * ```
 */
export function jobEnv(
  paths: DaemonPaths,
  options: { watch?: string; ldPreload?: string } & PythonOptions = {},
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
  Object.assign(env, pythonEnv(paths, options));
  return env;
}

/** What the Python client reads: its path, the socket, what to record. */
function pythonEnv(
  paths: DaemonPaths,
  options: PythonOptions,
): Record<string, string> {
  const ours = options.asMsmemscope
    ? `${PYTHON_AUTOSTART}:${MSMEMSCOPE_SHIM}:${PYTHON_CLIENT}`
    : `${PYTHON_AUTOSTART}:${PYTHON_CLIENT}`;
  const env: Record<string, string> = {
    PYTHONPATH: options.pythonPath ? `${ours}:${options.pythonPath}` : ours,
    STOMPWATCH_SOCKET: paths.socket,
    STOMPWATCH_HOME: PYTHON_CLIENT.replace(/\/clients\/python$/, ""),
  };
  if (options.events !== undefined) env.STOMPWATCH_EVENTS = options.events;
  if (options.callStack !== undefined) {
    env.STOMPWATCH_CALL_STACK = options.callStack;
  }
  return env;
}
