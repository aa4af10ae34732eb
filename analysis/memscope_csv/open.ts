/**
 * Opening an event log given by a person: refused, with a one-line reason,
 * when it is missing, unreadable or not a regular file (a directory, or a
 * FIFO, whose open would wait forever for a writer). Links are followed.
 *
 * @module
 */
import { MemscopeCsvError } from "./header.ts";

const WHAT = "pass the path of an msMemScope event log (memscope_dump_*.csv)";

function cannotRead(path: string, e: unknown): MemscopeCsvError {
  if (e instanceof Deno.errors.NotFound) {
    return new MemscopeCsvError(`Cannot read ${path}: no such file; ${WHAT}`);
  }
  if (e instanceof Deno.errors.PermissionDenied) {
    return new MemscopeCsvError(`Cannot read ${path}: permission denied`);
  }
  if (e instanceof Deno.errors.NotCapable) {
    // Deno guards some special files (/proc/self/mem, /dev/...) beyond any
    // read grant: its message would tell the user to pass a Deno flag.
    return new MemscopeCsvError(
      `Cannot read ${path}: not a file stompwatch reads (a special file of the system); ${WHAT}`,
    );
  }
  const why = (e as Error).message.split("\n")[0];
  return new MemscopeCsvError(`Cannot read ${path}: ${why}; ${WHAT}`);
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
): Promise<{ file: Deno.FsFile; label: string } & Disposable> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (e) {
    throw cannotRead(path, e);
  }
  if (!info.isFile) {
    throw new MemscopeCsvError(`Cannot read ${path}: not a file; ${WHAT}`);
  }
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (e) {
    throw cannotRead(path, e);
  }
  return { file, label: path, [Symbol.dispose]: () => file.close() };
}
