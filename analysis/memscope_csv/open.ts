/**
 * Opening an event log given by a person: refused, with a one-line reason,
 * when it is missing, unreadable or not a regular file (a directory, or a
 * FIFO, whose open would wait forever for a writer). Links are followed.
 *
 * Deno's own open has no O_NONBLOCK, and a check by path before it leaves
 * a moment in which a FIFO can be put in the file's place: the native
 * library opens non-blocking and checks what was opened by its descriptor.
 * (node:fs could too, but loading Node's compatibility layer took 70 ms of
 * every analysis command's start-up.)
 *
 * @module
 */
import {
  closeLogFile,
  LogOpenError,
  logSize,
  NativeLibraryError,
  openLogFile,
  readLogAt,
} from "../../ffi/bindings.ts";
import { MemscopeCsvError } from "./header.ts";

const WHAT = "pass the path of an msMemScope event log (memscope_dump_*.csv)";

function cannotRead(path: string, e: unknown): Error {
  // Nothing to do with the file (the library is missing or not granted):
  // said as it is.
  if (e instanceof NativeLibraryError || e instanceof Deno.errors.NotCapable) {
    return e;
  }
  const code = e instanceof LogOpenError ? e.code : "OTHER";
  if (code === "ENOENT") {
    return new MemscopeCsvError(`Cannot read ${path}: no such file; ${WHAT}`);
  }
  if (code === "EACCES") {
    return new MemscopeCsvError(`Cannot read ${path}: permission denied`);
  }
  if (code === "NOT_FILE") {
    return new MemscopeCsvError(`Cannot read ${path}: not a file; ${WHAT}`);
  }
  if (code === "SYSTEM_FILE") {
    // The kernel's own files (/proc/self/mem, /sys/...) are made on read,
    // some failing every read: never an event log.
    return new MemscopeCsvError(
      `Cannot read ${path}: not a file stompwatch reads (a special file of the system); ${WHAT}`,
    );
  }
  return new MemscopeCsvError(
    `Cannot read ${path}: ${(e as Error).message}; ${WHAT}`,
  );
}

/** What the readers need of an opened event log. */
export type EventLogFile = Pick<Deno.FsFile, "read" | "seek" | "close">;

/** A file opened by the native library, read at a position this object keeps. */
class DescriptorFile implements EventLogFile {
  readonly fd: number;
  #at = 0;
  #path: string;
  constructor(fd: number, path: string) {
    this.fd = fd;
    this.#path = path;
  }
  async read(p: Uint8Array): Promise<number | null> {
    if (p.length === 0) return 0;
    let n: number;
    try {
      n = await readLogAt(this.fd, p, this.#at);
    } catch (e) {
      throw new MemscopeCsvError(
        `Cannot read ${this.#path}: ${(e as Error).message}`,
      );
    }
    if (n === 0) return null;
    this.#at += n;
    return n;
  }
  seek(offset: number | bigint, whence: Deno.SeekMode): Promise<number> {
    const base = whence === Deno.SeekMode.Start
      ? 0
      : whence === Deno.SeekMode.Current
      ? this.#at
      : logSize(this.fd);
    this.#at = base + Number(offset);
    return Promise.resolve(this.#at);
  }
  close(): void {
    closeLogFile(this.fd);
  }
}

/**
 * An opened event log, to read with `readMemscopeCsv` and friends as many
 * times as needed: every pass then reads the one file that was checked,
 * through whatever link named it. Close it with `using`.
 *
 * @example
 * ```ts
 * import { openEventLog, readMemscopeCsv } from "./mod.ts";
 * using log = await openEventLog("memscope_dump.csv");
 * await readMemscopeCsv(log, (row) => console.log(row.id));
 * ```
 */
export async function openEventLog(
  path: string,
): Promise<{ file: EventLogFile; label: string } & Disposable> {
  // The library reads past Deno's sandbox: only what this command may read.
  const read = await Deno.permissions.query({ name: "read", path });
  if (read.state !== "granted") {
    throw new MemscopeCsvError(
      `Cannot read ${path}: this command may not read it; ./stompwatch lets each command read only the files named on its command line`,
    );
  }
  let fd: number;
  try {
    fd = await openLogFile(path);
  } catch (e) {
    throw cannotRead(path, e);
  }
  const file = new DescriptorFile(fd, path);
  return { file, label: path, [Symbol.dispose]: () => file.close() };
}

/**
 * The descriptor of a file {@link openEventLog} opened, for native readers;
 * undefined for any other file.
 *
 * @example
 * ```ts
 * import { eventLogFd, openEventLog } from "./mod.ts";
 * using log = await openEventLog("memscope_dump.csv");
 * console.log(eventLogFd(log.file));
 * ```
 */
export function eventLogFd(file: EventLogFile): number | undefined {
  return file instanceof DescriptorFile ? file.fd : undefined;
}
