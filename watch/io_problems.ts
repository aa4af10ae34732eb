/**
 * The daemon's record of files it cannot write: a write error (read-only
 * file system, disk full, directory removed) never stops the daemon; it is
 * said once on stderr, listed by `GET /health` while it lasts, and said
 * again when the file is written once more. Rows dropped because a backlog
 * was full stay listed, so a reader learns what the files lack.
 *
 * @module
 */

/** One file the daemon could not write, as `GET /health` lists it. */
export interface IoProblem {
  /** The file (or, before its name was taken, the directory). */
  file: string;
  /** The last error, e.g. `Read-only file system (os error 30)`. */
  error: string;
  /** When the problem began (ISO 8601). */
  since: string;
  /** Whether the file is being written again. */
  recovered: boolean;
  /** Bytes held in memory, to be written when the file can be written. */
  keptBytes: number;
  /** Rows (or whole dump files) lost because their backlog was full. */
  dropped: number;
}

/** Bytes all of a daemon's files keep in memory together while they cannot be written. */
export const DEFAULT_BACKLOG_BYTES = 256 << 20;

/** How {@linkcode IoProblems} is bounded. */
export interface IoProblemsOptions {
  /** Bytes all files together keep in memory (default {@linkcode DEFAULT_BACKLOG_BYTES}). */
  backlogBytes?: number;
}

/**
 * Collects write problems; one message on stderr per problem, not per row.
 * It also holds the one budget of bytes that every file writing through it
 * may keep in memory while it fails, so that many failing files cannot
 * together hold more than that.
 *
 * @example
 * ```ts
 * import { IoProblems } from "./io_problems.ts";
 * const problems = new IoProblems(() => {});
 * problems.failed("/out/device_0/x.csv", new Error("Read-only file system"), 120);
 * problems.list()[0].error; // "Read-only file system"
 * ```
 */
export class IoProblems {
  #byFile = new Map<string, IoProblem>();
  #say: (line: string) => void;
  #backlogLimit: number;
  #backlogHeld = 0;
  #droppedBytes = new Map<string, number>();

  /** `say` gets each one-line message (default: stderr). */
  constructor(
    say: (line: string) => void = (l) => console.error(l),
    options: IoProblemsOptions = {},
  ) {
    this.#say = say;
    this.#backlogLimit = options.backlogBytes ?? DEFAULT_BACKLOG_BYTES;
  }

  /** Takes `bytes` of the shared backlog budget; false when they do not fit. */
  takeBacklog(bytes: number): boolean {
    if (this.#backlogHeld + bytes > this.#backlogLimit) return false;
    this.#backlogHeld += bytes;
    return true;
  }

  /** Gives back `bytes` taken with {@linkcode takeBacklog}. */
  releaseBacklog(bytes: number): void {
    this.#backlogHeld = Math.max(0, this.#backlogHeld - bytes);
  }

  /** Bytes all files keep in memory now. */
  get backlogHeld(): number {
    return this.#backlogHeld;
  }

  /** `file` could not be written; `keptBytes` wait in memory for a retry. */
  failed(file: string, error: unknown, keptBytes: number): void {
    const text = error instanceof Error ? error.message : String(error);
    const known = this.#byFile.get(file);
    if (known && !known.recovered) {
      known.error = text;
      known.keptBytes = keptBytes;
      return;
    }
    this.#byFile.set(file, {
      file,
      error: text,
      since: new Date().toISOString(),
      recovered: false,
      keptBytes,
      dropped: known?.dropped ?? 0,
    });
    this.#say(
      `stompwatch: cannot write ${file}: ${text}; the daemon goes on, keeps what it can in memory and tries again (GET /health lists it)`,
    );
  }

  /**
   * `count` rows (or dump files) of `file`, `bytes` in all, were dropped:
   * its backlog was full, or the daemon stopped while it still failed.
   */
  dropped(file: string, count: number, error?: unknown, bytes = 0): void {
    let p = this.#byFile.get(file);
    if (!p) {
      this.failed(file, error ?? "not written", 0);
      p = this.#byFile.get(file)!;
    }
    if (p.dropped === 0) {
      this.#say(
        `stompwatch: dropping what cannot be written to ${file} (GET /health counts it)`,
      );
    }
    p.dropped += count;
    this.#droppedBytes.set(file, (this.#droppedBytes.get(file) ?? 0) + bytes);
  }

  /**
   * Says, per file, what never reached it: for the daemon's last words,
   * when no one can ask `GET /health` any more.
   */
  sayLosses(): void {
    for (const p of this.#byFile.values()) {
      if (p.dropped === 0) continue;
      // Rows are counted with their bytes; whole dump files without.
      const bytes = this.#droppedBytes.get(p.file) ?? 0;
      const what = bytes ? `rows (${bytes} bytes)` : "rows or dump files";
      this.#say(
        `stompwatch: ${p.file} lacks ${p.dropped} ${what} that could not be written and are lost`,
      );
    }
  }

  /** Updates how many bytes wait in memory for `file`. */
  keeping(file: string, keptBytes: number): void {
    const p = this.#byFile.get(file);
    if (p) p.keptBytes = keptBytes;
  }

  /** `file` was written again; `renamed` when its rows went to a new name. */
  recovered(file: string, renamed?: string): void {
    const p = this.#byFile.get(file);
    if (!p || p.recovered) return;
    const where = renamed && renamed !== file ? ` (as ${renamed})` : "";
    const lost = p.dropped ? `; ${p.dropped} dropped while it failed` : "";
    this.#say(`stompwatch: writing ${file} again${where}${lost}`);
    if (p.dropped === 0) {
      this.#byFile.delete(file);
      return;
    }
    p.recovered = true;
    p.keptBytes = 0;
  }

  /** Problems now, and earlier ones that lost something. */
  list(): IoProblem[] {
    return [...this.#byFile.values()].map((p) => ({ ...p }));
  }
}
