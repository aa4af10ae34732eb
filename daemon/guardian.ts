/**
 * The guardian: a small process beside the daemon that makes sure every
 * file of rows the daemon appends to (event logs, checksum CSVs) ends on a
 * row boundary, even when the daemon is killed with SIGKILL mid-write.
 *
 * Why a second process: the daemon cannot make this true by itself. A
 * write(2) to a file is copied into the page cache one page (or folio) at a
 * time, and Linux's generic_perform_write checks for a fatal signal before
 * each chunk: SIGKILL arriving during a write that spans a page boundary
 * leaves the bytes up to that boundary in the file and the rest nowhere.
 * Only a write that lies inside one page is all or nothing. Rows do not
 * line up with pages (a CSV row cannot be padded), so some row always
 * straddles a boundary, and no way of splitting writes keeps a kill from
 * landing in it. What does work is someone who outlives the writer and
 * trims after it: the guardian reads, on its stdin, the files the daemon
 * writes and a recent size of each that ends on a row boundary; when its
 * stdin ends (the daemon exited, however it died; the kernel closes the
 * pipe only once the daemon has left every system call) it cuts each file
 * back to its last complete row, scanning from that size with CSV quoting
 * in mind. It ignores SIGINT, SIGTERM and SIGHUP, which a terminal sends to
 * the whole process group, so that it is still there when the daemon dies.
 *
 * Run as a module it is the guardian; imported it is the daemon's side.
 *
 * @module
 */

import { CHECKSUM_CSV_NAME } from "../watch/dump_names.ts";
import { EVENT_LOG_NAMES } from "./event_log.ts";

const NEWLINE = 10, QUOTE = 34;
// Sizes are sent at most this often; a new file is sent at once.
const HINT_EVERY_MS = 200;

/**
 * Cuts `path` back to its last complete CSV row, scanning from `from`,
 * an offset known to be a row boundary; returns the bytes cut.
 *
 * @example
 * ```ts
 * import { trimToRowBoundary } from "./guardian.ts";
 * const path = Deno.makeTempFileSync();
 * Deno.writeTextFileSync(path, 'a,b\n1,"x\ny"\n2,hal');
 * trimToRowBoundary(path, 0); // 5, leaving 'a,b\n1,"x\ny"\n'
 * ```
 */
export function trimToRowBoundary(path: string, from: number): number {
  using file = Deno.openSync(path, { read: true, write: true });
  const size = file.statSync().size;
  // A file made again after it was removed is shorter than the hint.
  let pos = from <= size ? from : 0;
  file.seekSync(pos, Deno.SeekMode.Start);
  const buf = new Uint8Array(1 << 20);
  let quoted = false;
  let boundary = pos;
  for (;;) {
    const n = file.readSync(buf);
    if (!n) break;
    for (let i = 0; i < n; i++) {
      const b = buf[i];
      if (b === QUOTE) quoted = !quoted;
      else if (b === NEWLINE && !quoted) boundary = pos + i + 1;
    }
    pos += n;
  }
  if (boundary >= size) return 0;
  file.truncateSync(boundary);
  return size - boundary;
}

function lastByte(path: string): number | undefined {
  using file = Deno.openSync(path, { read: true });
  const size = file.statSync().size;
  if (size === 0) return undefined;
  file.seekSync(size - 1, Deno.SeekMode.Start);
  const b = new Uint8Array(1);
  return file.readSync(b) === 1 ? b[0] : undefined;
}

/**
 * Cuts the files of rows under `outputDir` (event logs) and `dumpDir`
 * (checksum CSVs) that a daemon left ending in part of a row back to their
 * last whole row; returns their paths. For when the
 * guardian was killed with its daemon (SIGKILL to the process group): the
 * next daemon on the directory, which alone serves it now, repairs them.
 * Only a file that does not end in a line break is read, from its start,
 * since only from there is a row boundary known.
 *
 * @example
 * ```ts
 * import { repairRowFiles } from "./guardian.ts";
 * repairRowFiles("/tmp/out", "/tmp/out/watch_dump");
 * // ["/tmp/out/device_0/memscope_dump_20260102030405.csv"]
 * ```
 */
export function repairRowFiles(outputDir: string, dumpDir: string): string[] {
  const repaired: string[] = [];
  let dirs: Array<[string, RegExp]>;
  try {
    dirs = [...Deno.readDirSync(outputDir)].filter((e) =>
      e.isDirectory && EVENT_LOG_NAMES.dir.test(e.name)
    ).map((e) => [`${outputDir}/${e.name}`, EVENT_LOG_NAMES.file]);
  } catch {
    return repaired;
  }
  dirs.push([dumpDir, CHECKSUM_CSV_NAME]);
  for (const [dir, rowFile] of dirs) {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch {
      continue; // no dump directory yet
    }
    for (const e of entries) {
      if (!e.isFile || !rowFile.test(e.name)) continue;
      const path = `${dir}/${e.name}`;
      try {
        const last = lastByte(path);
        if (last === undefined || last === NEWLINE) continue;
        if (trimToRowBoundary(path, 0) > 0) repaired.push(path);
      } catch { /* unreadable: left as it is */ }
    }
  }
  return repaired;
}

/** The daemon's end of a running guardian. */
export interface Guardian {
  /** Tells the guardian that `path` holds `size` bytes of whole rows. */
  committed(path: string, size: number): void;
  /** Ends the guardian (it trims nothing: every row is whole). */
  close(): Promise<void>;
}

/**
 * Starts the guardian for files under `outputDir`; undefined (said once on
 * stderr) when it cannot be started.
 *
 * @example
 * ```ts
 * const g = startGuardian("/tmp/out");
 * g?.committed("/tmp/out/device_0/memscope_dump_20260102030405.csv", 4096);
 * await g?.close();
 * ```
 */
export function startGuardian(outputDir: string): Guardian | undefined {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        "--no-config",
        // Granted by "." in OUT: a path in a flag would be split at a comma.
        "--allow-read=.",
        "--allow-write=.",
        new URL(import.meta.url).pathname,
      ],
      cwd: outputDir,
      // Its own process group: a Ctrl-C the terminal sends the daemon's
      // group, even before the guardian's Deno could listen for it, does
      // not reach it.
      detached: true,
      // Only what Deno needs: not the user's LD_PRELOAD (our own hook, after
      // `eval "$(stompwatch env)"`), which Deno would also refuse to pass on.
      clearEnv: true,
      env: Object.fromEntries(
        ["DENO_DIR", "HOME", "PATH", "XDG_CACHE_HOME"].flatMap((k) => {
          const v = Deno.env.get(k);
          return v === undefined ? [] : [[k, v]];
        }),
      ),
      stdin: "piped",
      stdout: "null",
      stderr: "inherit",
    }).spawn();
  } catch (e) {
    console.error(
      `stompwatch: cannot start the guardian that trims a half-written row if the daemon is killed: ${
        (e as Error).message
      }`,
    );
    return undefined;
  }
  let closing = false;
  child.status.then((status) => {
    if (closing && status.success) return;
    const how = status.signal
      ? `signal ${status.signal}`
      : `code ${status.code}`;
    console.error(
      `stompwatch: the guardian that trims a half-written row if the daemon is killed stopped (${how}): a daemon killed now may leave part of a row, which the next daemon on ${outputDir} cuts`,
    );
  });
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  const sent = new Map<string, number>();
  const latest = new Map<string, number>();
  const send = (path: string, size: number) => {
    sent.set(path, size);
    // A guardian that died cannot be helped; the daemon goes on.
    writer.write(encoder.encode(JSON.stringify([size, path]) + "\n"))
      .catch(() => {});
  };
  const timer = setInterval(() => {
    for (const [path, size] of latest) {
      if (sent.get(path) !== size) send(path, size);
    }
  }, HINT_EVERY_MS);
  Deno.unrefTimer(timer);
  return {
    committed(path, size) {
      latest.set(path, size);
      // A new file, or one made again (shorter): the old size is no boundary.
      const before = sent.get(path);
      if (before === undefined || size < before) send(path, size);
    },
    async close() {
      closing = true;
      clearInterval(timer);
      await writer.close().catch(() => {});
      await child.status;
    },
  };
}

async function guard(): Promise<void> {
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    Deno.addSignalListener(signal, () => {});
  }
  const files = new Map<string, number>();
  let rest = "";
  for await (
    const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())
  ) {
    rest += chunk;
    let i;
    while ((i = rest.indexOf("\n")) >= 0) {
      const [size, path] = JSON.parse(rest.slice(0, i)) as [number, string];
      files.set(path, size);
      rest = rest.slice(i + 1);
    }
  }
  for (const [path, from] of files) {
    try {
      const cut = trimToRowBoundary(path, from);
      if (cut) {
        console.error(
          `stompwatch: ${path} ended in part of a row (the daemon stopped mid-write): cut back to its last whole row (${cut} bytes)`,
        );
      }
    } catch (e) {
      // Removed: nothing to cut. Anything else is said: the row stays cut.
      if (!(e instanceof Deno.errors.NotFound)) {
        console.error(
          `stompwatch: cannot cut ${path} back to its last whole row: ${
            (e as Error).message
          }`,
        );
      }
    }
  }
  Deno.exit(0);
}

if (import.meta.main) await guard();
