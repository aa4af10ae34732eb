/**
 * `OUT/watch_dump/watch_report.json`: for every watch, the first change of
 * its block and whether it was a stomp. Written whole and renamed into
 * place, so a reader sees the old report or the new one, never half.
 *
 * @module
 */
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
    >
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
    })),
  };
}

/** Writes the report into `dumpDir` atomically (0600). */
export function writeReport(dumpDir: string, watches: WatchInfo[]): string {
  const path = `${dumpDir}/watch_report.json`;
  const tmp = `${dumpDir}/.watch_report.json.part`;
  Deno.writeTextFileSync(
    tmp,
    JSON.stringify(buildReport(watches), null, 2) + "\n",
    { mode: 0o600 },
  );
  Deno.renameSync(tmp, path);
  return path;
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
  const c = w.first_change;
  if (!c) return `${who}: unchanged`;
  if (c.outside_op) {
    return `${who}: STOMPED outside any op, between ${c.previous_op} #${c.previous_call_count} and ${c.op} #${c.call_count} (${c.before_file} -> ${c.after_file})`;
  }
  const verdict = w.stomp ? "STOMPED by" : "written by";
  const note = w.stomp
    ? ", which was not allowed to write it (not one of its outputs)"
    : ", one of its outputs";
  return `${who}: ${verdict} ${c.op} #${c.call_count}${note} (${c.before_file} -> ${c.after_file})`;
}
