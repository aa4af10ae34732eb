/**
 * The one way the daemon writes files of rows (event log, checksum CSVs):
 * {@linkcode RowFile} appends whole rows to a file it never truncates below
 * what it wrote, under a name no other file had (exclusive create), and
 * survives write errors: rows that cannot be written are kept in memory
 * (within one budget for all of a daemon's files, held by
 * {@linkcode IoProblems}) and written when the file can be written again;
 * what a full budget drops is counted per file.
 *
 * @module
 */
import { writeAll } from "../analysis/files.ts";
import type { IoProblems } from "./io_problems.ts";

const NEWLINE = 10;
/** How often a failing file is tried again. */
export const RETRY_EVERY_MS = 500;

function rowsIn(bytes: Uint8Array): number {
  let n = 0;
  for (
    let i = bytes.indexOf(NEWLINE);
    i >= 0;
    i = bytes.indexOf(NEWLINE, i + 1)
  ) n++;
  return n;
}

/** How a {@linkcode RowFile} is named and bounded. */
export interface RowFileOptions {
  /** The directory; made (0700) when missing. */
  dir: string;
  /** The file name to try on attempt `i` (0, 1, ...) while names are taken. */
  name: (attempt: number) => string;
  /** Written first to a file this writer creates. */
  header?: Uint8Array;
  /** Where failures are said, and the budget of bytes kept in memory. */
  problems: IoProblems;
  /** Told the file's size after each write that ended on a row boundary. */
  onCommitted?: (path: string, size: number) => void;
  /** Told the name once the file has been created. */
  onCreated?: (path: string) => void;
  /** The clock retries are timed by (ms); tests give their own. */
  now?: () => number;
}

/**
 * An append-only file of whole rows that outlives write errors.
 *
 * @example
 * ```ts
 * import { IoProblems } from "./io_problems.ts";
 * import { RowFile } from "./row_file.ts";
 * const dir = Deno.makeTempDirSync();
 * const f = new RowFile({ dir, name: () => "log.csv", problems: new IoProblems() });
 * f.write(new TextEncoder().encode("1,a\n"));
 * f.close();
 * ```
 */
export class RowFile {
  readonly options: RowFileOptions;
  #file: Deno.FsFile | undefined;
  #path: string | undefined;
  /** Bytes known to be in the file, all of them whole rows. */
  #size = 0;
  #backlog: Uint8Array[] = [];
  #backlogBytes = 0;
  #retryAt = 0;
  #failing = false;

  constructor(options: RowFileOptions) {
    this.options = options;
  }

  /** The file's path once created; until then the name it will try first. */
  get path(): string {
    return this.#path ?? `${this.options.dir}/${this.options.name(0)}`;
  }

  /** Whether the file has been created. */
  get created(): boolean {
    return this.#path !== undefined;
  }

  /** Bytes waiting in memory for the file to be writable. */
  get backlogBytes(): number {
    return this.#backlogBytes;
  }

  /** Appends whole rows (each ending in a line break): now, or kept for later. */
  write(rows: Uint8Array): void {
    if (rows.length === 0) return;
    if (this.#failing) {
      this.#keep(rows);
      this.retry();
      return;
    }
    try {
      this.#open();
      this.#append(rows);
    } catch (e) {
      this.#keep(rows);
      this.#fail(e);
    }
  }

  /**
   * Tries a failing file again, at most once per {@linkcode RETRY_EVERY_MS}:
   * writes what was kept.
   */
  retry(): void {
    if (!this.#failing || this.#now() < this.#retryAt) return;
    try {
      this.#open();
      while (this.#backlog.length) {
        const b = this.#backlog[0];
        this.#append(b);
        this.#backlog.shift();
        this.#backlogBytes -= b.length;
        this.options.problems.releaseBacklog(b.length);
      }
    } catch (e) {
      this.#fail(e);
      return;
    }
    this.#failing = false;
    this.options.problems.recovered(this.#key(), this.#path);
  }

  /**
   * Closes the file once everything is written; returns false (and stays
   * open to {@linkcode retry}) while rows wait for it.
   */
  closeWhenWritten(): boolean {
    this.retry();
    if (this.#failing) return false;
    this.#file?.close();
    this.#file = undefined;
    return true;
  }

  /** Tries once more, then closes; what still cannot be written is counted as dropped. */
  close(): void {
    if (this.#failing) {
      this.#retryAt = 0;
      this.retry();
    }
    if (this.#failing) {
      const lost = this.#backlog.reduce((n, b) => n + rowsIn(b), 0);
      this.options.problems.dropped(
        this.#key(),
        lost,
        undefined,
        this.#backlogBytes,
      );
      this.options.problems.releaseBacklog(this.#backlogBytes);
      this.#backlog = [];
      this.#backlogBytes = 0;
      this.options.problems.keeping(this.#key(), 0);
    }
    this.#file?.close();
    this.#file = undefined;
  }

  // The key problems are listed under: the first name tried, so the
  // failure and the recovery are said of the same file.
  #key(): string {
    return `${this.options.dir}/${this.options.name(0)}`;
  }

  #now(): number {
    return this.options.now?.() ?? Date.now();
  }

  #keep(rows: Uint8Array): void {
    if (!this.options.problems.takeBacklog(rows.length)) {
      this.options.problems.dropped(
        this.#key(),
        rowsIn(rows),
        undefined,
        rows.length,
      );
      return;
    }
    this.#backlog.push(rows.slice());
    this.#backlogBytes += rows.length;
    this.options.problems.keeping(this.#key(), this.#backlogBytes);
  }

  #fail(e: unknown): void {
    this.#failing = true;
    this.#retryAt = this.#now() + RETRY_EVERY_MS;
    // A file whose directory went away is reopened on the next try.
    this.#file?.close();
    this.#file = undefined;
    this.options.problems.failed(this.#key(), e, this.#backlogBytes);
  }

  #open(): void {
    if (this.#file) {
      // Rows written to a removed file would be lost without an error.
      if (this.#file.statSync().nlink !== 0) return;
      this.#file.close();
      this.#file = undefined;
      throw new Error(`${this.#path} was removed`);
    }
    const { dir, name, header } = this.options;
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (this.#path) {
      // Ours before (it was removed, or a write failed): made again when it
      // is gone. Past the rows we know it holds there can only be part of
      // a row a failed write left and could not take back: cut it before
      // appending, or a half row would end up mid-file, where nothing
      // repairs it. While that is refused, the file keeps failing.
      this.#file = Deno.openSync(this.#path, {
        append: true,
        create: true,
        mode: 0o600,
      });
      const size = this.#file.statSync().size;
      if (size > this.#size) this.#file.truncateSync(this.#size);
      else this.#size = size;
      if (this.#size === 0 && header) this.#append(header);
      return;
    }
    for (let attempt = 0;; attempt++) {
      const path = `${dir}/${name(attempt)}`;
      try {
        // createNew: a file that holds someone's rows is never opened over.
        this.#file = Deno.openSync(path, {
          append: true,
          createNew: true,
          mode: 0o600,
        });
      } catch (e) {
        if (e instanceof Deno.errors.AlreadyExists && attempt < 10_000) {
          continue;
        }
        throw e;
      }
      this.#path = path;
      this.#size = 0;
      this.options.onCreated?.(path);
      if (header) this.#append(header);
      return;
    }
  }

  #append(bytes: Uint8Array): void {
    const file = this.#file!;
    try {
      writeAll(file, bytes);
    } catch (e) {
      // A write cut short (disk full) leaves part of a row: take it back.
      try {
        file.truncateSync(this.#size);
      } catch { /* the file system refuses even that; the guardian trims */ }
      throw e;
    }
    this.#size += bytes.length;
    this.options.onCommitted?.(this.#path!, this.#size);
  }
}
