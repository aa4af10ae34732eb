/**
 * `OUT/watch_dump/watch_report.json`: for every watch, the first change of
 * its block and whether it was a stomp. Written whole and renamed into
 * place, so a reader sees the old report or the new one, never half. A
 * daemon started on an output directory that holds a report keeps that
 * report's watches: the file lists the watches of every daemon that used
 * the directory, earliest first.
 *
 * @module
 */
import type { IoProblems } from "./io_problems.ts";
import { writeAll } from "../analysis/files.ts";
import type { WatchInfo } from "./types.ts";

/** The report as written. */
export interface WatchReport {
  watches: Array<
    Pick<
      WatchInfo,
      | "name"
      | "pid"
      | "device"
      | "first_change"
      | "stomp"
      | "changes"
      | "source"
      | "addr"
      | "length"
    > & { unread_samples?: number }
  >;
}

/**
 * Builds the report from the watches' current state.
 *
 * @example
 * ```ts
 * buildReport([]); // { watches: [] }
 * ```
 */
export function buildReport(watches: WatchInfo[]): WatchReport {
  return {
    watches: watches.map((w) => ({
      name: w.name,
      pid: w.pid,
      device: w.device,
      first_change: w.first_change,
      stomp: w.stomp,
      source: w.source,
      addr: w.addr,
      length: w.length,
      changes: w.changes,
      ...(w.unreadSamples ? { unread_samples: w.unreadSamples } : {}),
    })),
  };
}

/**
 * A report earlier daemons left, or none; one that is not a report is moved
 * aside. `blocked` says why nothing can be written at `path` while it is
 * there (a directory, or a file that could not be moved aside).
 */
function earlierWatches(
  path: string,
): { watches: WatchReport["watches"]; blocked?: string } {
  if (isDirectory(path)) {
    return { watches: [], blocked: "it is a directory; move it away" };
  }
  try {
    const report = JSON.parse(Deno.readTextFileSync(path)) as WatchReport;
    if (Array.isArray(report?.watches)) return { watches: report.watches };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { watches: [] };
    // Not JSON, or unreadable: kept below, never written over.
  }
  // Not ours to drop: it goes aside under a name no file has.
  for (let i = 0;; i++) {
    const aside = `${path}.unreadable${i ? `.${i}` : ""}`;
    try {
      Deno.linkSync(path, aside);
      Deno.removeSync(path);
      return { watches: [] };
    } catch (e) {
      if (e instanceof Deno.errors.AlreadyExists) continue;
      const why = (e as Error).message;
      return {
        watches: [],
        blocked:
          `it is not a report and cannot be moved aside (${why}); move it away`,
      };
    }
  }
}

function isDirectory(path: string): boolean {
  try {
    return Deno.lstatSync(path).isDirectory;
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The report of one daemon: earlier daemons' watches, then this one's,
 * rewritten whole each time. A write error is said through `problems`, and
 * the next {@linkcode write} or {@linkcode retry} tries again.
 *
 * @example
 * ```ts
 * import { IoProblems } from "./io_problems.ts";
 * import { WatchReportFile } from "./report.ts";
 * const report = new WatchReportFile(Deno.makeTempDirSync(), new IoProblems());
 * report.write([]);
 * ```
 */
export class WatchReportFile {
  readonly path: string;
  #earlier: WatchReport["watches"];
  #problems: IoProblems;
  #pending: WatchInfo[] | undefined;
  #blocked: string | undefined;

  /**
   * Reads the report already in `dumpDir`, if any. What stands in the
   * report's place is said through `problems` and waited out, like any
   * other write error: the daemon runs without its report meanwhile.
   */
  constructor(dumpDir: string, problems: IoProblems) {
    this.path = `${dumpDir}/watch_report.json`;
    this.#problems = problems;
    const { watches, blocked } = earlierWatches(this.path);
    this.#earlier = watches;
    this.#blocked = blocked;
    if (blocked) problems.failed(this.path, new Error(blocked), 0);
  }

  /** Writes the report with `watches` as this daemon's (0600, atomically). */
  write(watches: WatchInfo[]): void {
    this.#pending = watches;
    if (this.#blocked) {
      if (exists(this.path)) {
        this.#problems.failed(this.path, new Error(this.#blocked), 0);
        return;
      }
      this.#blocked = undefined; // moved away: written from now on
    }
    const report = buildReport(watches);
    report.watches = [...this.#earlier, ...report.watches];
    const tmp = this.path.replace(/[^/]*$/, ".watch_report.json.part");
    try {
      const file = Deno.openSync(tmp, {
        write: true,
        create: true,
        truncate: true, // our own part file, never the report itself
        mode: 0o600,
      });
      try {
        writeAll(
          file,
          new TextEncoder().encode(JSON.stringify(report, null, 2) + "\n"),
        );
      } finally {
        file.close();
      }
      Deno.renameSync(tmp, this.path);
    } catch (e) {
      this.#problems.failed(this.path, e, 0);
      return;
    }
    this.#pending = undefined;
    this.#problems.recovered(this.path);
  }

  /** Writes the report again if the last write failed. */
  retry(): void {
    if (this.#pending) this.write(this.#pending);
  }
}

/**
 * One line per watch for a person at a terminal.
 *
 * @example
 * ```ts
 * formatVerdictLine({ name: "w", pid: 1, stomp: false, first_change: null } as never);
 * ```
 */
export function formatVerdictLine(w: WatchInfo): string {
  const who = `watch ${w.name} (pid ${w.pid}, ${w.addr}, ${w.length} bytes)`;
  const unread = w.unreadSamples
    ? `; ${w.unreadSamples} of its samples could not be read (the block freed, or its device memory not copied), so a change there is not seen`
    : "";
  return verdictOf(w, who) + unread;
}

function verdictOf(w: WatchInfo, who: string): string {
  const c = w.first_change;
  if (!c) return `${who}: unchanged`;
  if (c.outside_op) {
    return `${who}: STOMPED outside any op, between ${c.previous_op} #${c.previous_call_count} and ${c.op} #${c.call_count} (${c.before_file} -> ${c.after_file})`;
  }
  const verdict = w.stomp ? "STOMPED by" : "written by";
  const note = !w.stomp
    ? ", one of its outputs"
    : c.beyond_writable
    ? ", which changed bytes of it beside the part it may write"
    : ", which was not allowed to write it (not one of its outputs)";
  return `${who}: ${verdict} ${c.op} #${c.call_count}${note} (${c.before_file} -> ${c.after_file})`;
}
