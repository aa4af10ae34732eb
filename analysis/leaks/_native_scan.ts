/**
 * A native pass of check_leaks over an event log (`ffi/daemon/leak_scan.c`),
 * the first or one over the windows: the header read and checked by the
 * TypeScript reader (its errors are the ones a person sees), the rows from
 * there on natively, with room for as many marks as the log holds.
 *
 * @module
 */
import { eventLogFd, type EventLogFile } from "../memscope_csv/open.ts";
import { MemscopeCsvError } from "../memscope_csv/header.ts";
import {
  type EventLogSource,
  readMemscopeStart,
  rowRunsOn,
} from "../memscope_csv/read.ts";
import {
  leakScan,
  type LeakScanInput,
  type LeakScanResult,
  RowRunsOnError,
} from "../../ffi/bindings.ts";
import { LEAK_COLUMNS, type LeakRows } from "./_leak_rows.ts";
import type { CheckedOptions } from "./options.ts";

/**
 * Marks a first try of a pass has room for, at least: a job marks each
 * step. A log has room for a mark every MARK_BYTES besides (one every 8
 * memory rows or so): a job that marks more often (a mark every 10 rows,
 * 100,000 in 1M rows) was read twice, 1.6x the time.
 */
const MARK_ROOM = 65_536, MARK_BYTES = 1024;

/** MEMSCOPE_HEADER positions of LEAK_COLUMNS, in the order leak_scan.c reads them. */
const HEADER_AT = [0, 1, 2, 3, 7, 8, 9];

/** A log a native pass can read, and its descriptor. */
export interface NativeLog {
  log: { file: EventLogFile; label: string };
  fd: number;
}

/**
 * The descriptor a native pass reads, where the source is a file it can read.
 *
 * @example
 * ```ts ignore
 * const native = nativeFd(log);
 * ```
 */
export function nativeFd(source: EventLogSource): NativeLog | undefined {
  if (typeof source === "string") return undefined;
  const fd = eventLogFd(source.file);
  return fd === undefined ? undefined : { log: source, fd };
}

/** What a native pass over the log is to do: {@link scan}. */
export interface Scan {
  /** How far it may read, which sizes the room for marks. */
  size: number;
  /** Where its rows go (their count and whether their texts need reading set here). */
  rows: LeakRows;
  /** A pass after the first: the windows, and what it does with them. */
  windows?: LeakScanInput["windows"];
  /** Where it starts reading rows, when not at the first. */
  from?: { offset: number; line: number };
  /** The Ptrs freed, which a first pass fills and a streaming pass reads. */
  freed?: Uint8Array;
}

/**
 * A native pass over the log into `rows`, with its marks.
 *
 * @example
 * ```ts ignore
 * const pass = await scan(native, checked, { size, rows });
 * ```
 */
export async function scan(
  { log: source, fd }: NativeLog,
  options: CheckedOptions,
  { size, rows, windows, from, freed }: Scan,
): Promise<
  {
    found: LeakScanResult;
    markDevice: Uint32Array;
    markId: Float64Array;
    header: string[];
  } | undefined
> {
  const start = await readMemscopeStart(source, { columns: LEAK_COLUMNS });
  if (start === undefined) return undefined;
  // A mark row has at least 8 fields, 19 bytes: room for every row that
  // could be one is address space the log's size over 16 (100 MB for 134
  // MB), which V8 answered with collections as it came (external memory
  // pressure: scavenges and a mark-compact, 5-9 ms of a command). A first
  // try has room for MARK_ROOM marks or a mark every MARK_BYTES; a log with
  // more is read again with room for all.
  const all = Math.ceil(size / 16) + 1;
  const first = Math.max(MARK_ROOM, Math.ceil(size / MARK_BYTES));
  for (let room = Math.min(first, all);; room = all) {
    // Both in one buffer, as LeakRows carves its arrays (#carve says why).
    const markBuffer = new ArrayBuffer(room * 12);
    const markId = new Float64Array(markBuffer, 0, room);
    const markDevice = new Uint32Array(markBuffer, room * 8, room);
    let found: LeakScanResult;
    try {
      found = await leakScan({
        fd,
        columns: HEADER_AT.map((k) => start.columns.at[k]),
        offset: from?.offset ?? start.offset,
        line: from?.line ?? start.line,
        rows,
        budget: options.rowBudget,
        markDevice,
        markId,
        eventType: options.eventType,
        mstxInfo: options.mstxInfo,
        windows,
        startIndex: windows ? undefined : options.startIndex,
        halfAt: rows.halfAt,
        freed,
      });
    } catch (e) {
      if (e instanceof RowRunsOnError) throw rowRunsOn(e.line, source.label);
      throw new MemscopeCsvError(
        `Cannot read ${source.label}: ${(e as Error).message}`,
      );
    }
    if (found.marksFull && room < all) continue;
    rows.skip(found.firstRow);
    rows.length = found.rowsKept;
    rows.textsFromValues = found.oddIds === 0;
    return { found, markDevice, markId, header: start.columns.names };
  }
}
