/**
 * Opening an event log given by a person: refused, with a one-line reason,
 * when it is missing, unreadable or not a regular file (a directory, or a
 * FIFO, whose open would wait forever for a writer). Links are followed.
 *
 * Deno's own open has no O_NONBLOCK, and a check by path before it leaves
 * a moment in which a FIFO can be put in the file's place; node:fs opens
 * non-blocking, and what was opened is then checked by its descriptor.
 *
 * @module
 */
import { close, constants, fstat, open, read, type Stats } from "node:fs";
import { MemscopeCsvError } from "./header.ts";

const WHAT = "pass the path of an msMemScope event log (memscope_dump_*.csv)";

function cannotRead(path: string, e: unknown): MemscopeCsvError {
  // node:fs says errno codes; Deno's own errors (NotCapable) pass through.
  const code = (e as { code?: string }).code;
  if (e instanceof Deno.errors.NotFound || code === "ENOENT") {
    return new MemscopeCsvError(`Cannot read ${path}: no such file; ${WHAT}`);
  }
  if (
    e instanceof Deno.errors.PermissionDenied || code === "EACCES" ||
    code === "EPERM"
  ) {
    return new MemscopeCsvError(`Cannot read ${path}: permission denied`);
  }
  if (e instanceof Deno.errors.NotCapable) {
    // Deno guards some special files (/proc/self/mem, /dev/...) beyond any
    // read grant: its message would tell the user to pass a Deno flag.
    return new MemscopeCsvError(
      `Cannot read ${path}: not a file stompwatch reads (a special file of the system); ${WHAT}`,
    );
  }
  // "ELOOP: too many symbolic links encountered, open '...'": the middle.
  const why = (e as Error).message.split("\n")[0].replace(/^E[A-Z]+: /, "")
    .replace(/, open '.*'$/, "");
  return new MemscopeCsvError(`Cannot read ${path}: ${why}; ${WHAT}`);
}

/** What the readers need of an opened event log. */
export type EventLogFile = Pick<Deno.FsFile, "read" | "seek" | "close">;

function call<T>(f: (done: (e: Error | null, value: T) => void) => void) {
  return new Promise<T>((resolve, reject) =>
    f((e, value) => e ? reject(e) : resolve(value))
  );
}

/** A file opened by node:fs, read at a position this object keeps. */
class DescriptorFile implements EventLogFile {
  #fd: number;
  #at = 0;
  constructor(fd: number) {
    this.#fd = fd;
  }
  async read(p: Uint8Array): Promise<number | null> {
    if (p.length === 0) return 0;
    const n = await call<number>((done) =>
      read(this.#fd, p, 0, p.length, this.#at, done)
    );
    if (n === 0) return null;
    this.#at += n;
    return n;
  }
  async seek(offset: number | bigint, whence: Deno.SeekMode): Promise<number> {
    const base = whence === Deno.SeekMode.Start
      ? 0
      : whence === Deno.SeekMode.Current
      ? this.#at
      : (await call<Stats>((done) => fstat(this.#fd, done))).size;
    this.#at = base + Number(offset);
    return this.#at;
  }
  close(): void {
    close(this.#fd);
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
  let fd: number, info: Stats;
  try {
    fd = await call<number>((done) =>
      open(path, constants.O_RDONLY | constants.O_NONBLOCK, done)
    );
  } catch (e) {
    throw cannotRead(path, e);
  }
  try {
    info = await call<Stats>((done) => fstat(fd, done));
  } catch (e) {
    close(fd);
    throw cannotRead(path, e);
  }
  if (!info.isFile()) {
    close(fd);
    throw new MemscopeCsvError(`Cannot read ${path}: not a file; ${WHAT}`);
  }
  const file = new DescriptorFile(fd);
  return { file, label: path, [Symbol.dispose]: () => file.close() };
}
