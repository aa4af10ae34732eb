/**
 * The header of an msMemScope event log: the columns msMemScope writes, the
 * error for input that is not such a log, and how a header line is read
 * (columns found by name, in any order).
 *
 * @module
 */

/** The header msMemScope writes, in its order. */
export const MEMSCOPE_HEADER = [
  "ID",
  "Event",
  "Event Type",
  "Name",
  "Timestamp(ns)",
  "Process Id",
  "Thread Id",
  "Device Id",
  "Ptr",
  "Attr",
  "Call Stack(Python)",
  "Call Stack(C)",
] as const;

/** A column of {@link MEMSCOPE_HEADER}. */
export type MemscopeColumn = typeof MEMSCOPE_HEADER[number];

/** Columns required unless the caller names fewer: all but the call stacks. */
export const DATA_COLUMNS: readonly MemscopeColumn[] = MEMSCOPE_HEADER.slice(
  0,
  10,
);

/**
 * Any input the reader cannot take, with a message fit to show a person as is
 * (what is wrong, where, what to do).
 */
export class MemscopeCsvError extends Error {
  override name = "MemscopeCsvError";
}

/** Where each known column sits in a file's header. */
export interface Columns {
  /** Header position of each known column, -1 when absent. */
  at: Int32Array;
  byName: Map<string, number>;
  names: string[];
}

/** A header name as compared: trimmed, lower case. */
export function normalise(name: string): string {
  return name.trim().toLowerCase();
}

function splitHeader(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let j = i + 1, v = "";
      for (;;) {
        const q = line.indexOf('"', j);
        if (q < 0) {
          v += line.slice(j);
          j = line.length;
          break;
        }
        v += line.slice(j, q);
        if (line[q + 1] === '"') {
          v += '"';
          j = q + 2;
        } else {
          j = q + 1;
          break;
        }
      }
      out.push(v);
      const c = line.indexOf(",", j);
      i = c < 0 ? line.length + 1 : c + 1;
    } else {
      const c = line.indexOf(",", i);
      out.push(line.slice(i, c < 0 ? line.length : c));
      i = c < 0 ? line.length + 1 : c + 1;
    }
  }
  return out;
}

/**
 * Finds msMemScope's columns in an event log's first line, by name, in any
 * order and case, so logs of older builds read too. Refuses a line that is
 * not such a header (or lacks a `required` column) without ever quoting it:
 * the file may be anything its caller can read, and the message may travel
 * over HTTP.
 *
 * @throws {MemscopeCsvError} naming what is missing, never the line's text.
 * @example
 * ```ts
 * import { headerColumns } from "./header.ts";
 * const cols = headerColumns("ID,Event,Event Type,Ptr", "log.csv", ["Ptr"]);
 * cols.at[0]; // 0: the ID column
 * ```
 */
export function headerColumns(
  line: string,
  label: string,
  required: readonly MemscopeColumn[],
): Columns {
  if (line.includes("\0")) {
    throw new MemscopeCsvError(
      `Not a CSV file: ${label} holds binary data; pass an msMemScope event log (memscope_dump_*.csv)`,
    );
  }
  const names = splitHeader(line);
  const byName = new Map<string, number>();
  names.forEach((n, i) => {
    if (!byName.has(normalise(n))) byName.set(normalise(n), i);
  });
  const at = new Int32Array(MEMSCOPE_HEADER.length).fill(-1);
  MEMSCOPE_HEADER.forEach((col, k) => {
    let i = byName.get(normalise(col));
    // Older builds wrote other units; any Timestamp column will do.
    if (i === undefined && col === "Timestamp(ns)") {
      i = names.findIndex((n) => normalise(n).startsWith("timestamp"));
    }
    at[k] = i ?? -1;
  });
  if (!byName.has("id") || !byName.has("event")) {
    // Never quote the line: the file may be anything the caller can read
    // (a key, a token), and the message may travel over HTTP.
    throw new MemscopeCsvError(
      `Not an msMemScope event log: ${label} has no ID and Event columns in its first line; pass a memscope_dump_*.csv file (its header is ${
        MEMSCOPE_HEADER.slice(0, 3).join(",")
      },...)`,
    );
  }
  const missing = required.filter((c) => at[MEMSCOPE_HEADER.indexOf(c)] < 0);
  if (missing.length) {
    throw new MemscopeCsvError(
      `Wrong header in ${label}: missing column${
        missing.length > 1 ? "s" : ""
      } ${missing.map((m) => `"${m}"`).join(", ")}; msMemScope writes ${
        MEMSCOPE_HEADER.join(",")
      }`,
    );
  }
  return { at, byName, names };
}
