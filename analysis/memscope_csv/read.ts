/**
 * Streaming reader for msMemScope event logs
 * (`memscope_dump_*.csv`, SPEC section 2), fast enough to keep up with the
 * disk: rows are framed on the raw bytes of a large read buffer and handed to
 * the caller as one reusable {@link MemscopeRow} cursor whose fields are split
 * and decoded only when asked for.
 *
 * Accepted: UTF-8 BOM, CRLF or LF, a last line without newline, empty lines,
 * quoted fields with commas, doubled quotes and newlines, columns in any
 * order (found by header name), Ptr as `0x%016x` or old decimal, Device Id as
 * a number, `N/A`, `cpu` or `host`, Attr new (`{allocation_id:..,addr:..,
 * size:..}`) and old (`{addr:..,size:..,owner:,MID:7}`). Rows are delivered in
 * file order, which is not ID order.
 *
 * @example
 * ```ts
 * import { readMemscopeCsv } from "./mod.ts";
 * let halBytes = 0;
 * await readMemscopeCsv("memscope_dump.csv", (row) => {
 *   if (row.event === "MALLOC" && row.eventType === "HAL") {
 *     halBytes += row.size ?? 0;
 *   }
 * });
 * ```
 *
 * @module
 */
import {
  ChunkLoop,
  giveScanner,
  LONGEST_ROW,
  MAX_ROW_BYTES,
  READ_BYTES,
  REC_END,
  REC_LINE,
  REC_MAX_SEPS,
  REC_NSEP,
  REC_SEP0,
  REC_SLOTS,
  REC_START,
  refusesRow,
  type RowScanner,
  ScanLimit,
  takeScanner,
} from "./_scan.ts";
import { decodeRange } from "./_bytes.ts";
import {
  type Columns,
  DATA_COLUMNS,
  headerColumns,
  MEMSCOPE_HEADER,
  type MemscopeColumn,
  MemscopeCsvError,
} from "./header.ts";
import { MemscopeRow } from "./row.ts";
import { eventLogFd, type EventLogFile } from "./open.ts";
import {
  LOG_CUT_REASON,
  rowsAt,
  type RowsAtResult,
} from "../../ffi/bindings.ts";

/**
 * Where rows come from: a path, opened and closed by the reader, or a file
 * the caller opened (see `openEventLog`), read from its start and left open,
 * so that every pass of a multi-pass analysis reads the one file it checked.
 */
export type EventLogSource = string | { file: EventLogFile; label: string };

function labelOf(source: EventLogSource, options: ReadOptions): string {
  return options.label ?? (typeof source === "string" ? source : source.label);
}

/** The file of a source, at its start; disposing closes only what it opened. */
async function openSource(
  source: EventLogSource,
): Promise<{ file: EventLogFile; [Symbol.dispose](): void }> {
  if (typeof source === "string") {
    const file = await Deno.open(source, { read: true });
    return { file, [Symbol.dispose]: () => file.close() };
  }
  await source.file.seek(0, Deno.SeekMode.Start);
  return { file: source.file, [Symbol.dispose]: () => {} };
}

/** Options of {@link readMemscopeCsv} and {@link readMemscopeBytes}. */
export interface ReadOptions {
  /** Columns that must be in the header; default {@link DATA_COLUMNS}. */
  columns?: readonly MemscopeColumn[];
  /**
   * Read size in bytes; default READ_BYTES (2 MiB), the size the native
   * readers' refusals of long rows assume (_scan.ts refusesRow).
   */
  bufferSize?: number;
  /** Shown in error messages instead of the path. */
  label?: string;
  /**
   * A fast pre-filter, at most two columns among the first twelve: only
   * rows whose value in the column starts with one of the given ASCII
   * characters reach the callback, e.g. `{ Event: "MF" }` for MALLOC, MSTX
   * and FREE. The rest are skipped before any JavaScript sees them; still
   * check the full value in the callback.
   */
  startsWith?: Partial<Record<MemscopeColumn, string>>;
}

/** What a read went through. */
export interface ReadSummary {
  /** Data rows in the input (empty lines not counted), filtered or not. */
  rows: number;
  /** Bytes of the file. */
  bytes: number;
  /** Column names as the header wrote them. */
  header: string[];
}

/**
 * Turns scanner records into rows: the first non-empty line is the header,
 * every later one goes to `onRow` through the one cursor.
 */
class RowFeed {
  header: Columns | undefined;
  rows = 0;
  readonly scanner: RowScanner;
  readonly onRecord: (rec: number) => void;
  #row: MemscopeRow | undefined;
  #label: string;

  /** `size`: bytes of an input in memory, when known. */
  constructor(
    options: ReadOptions,
    label: string,
    onRow: (row: MemscopeRow) => void,
    size = Infinity,
  ) {
    this.#label = label;
    const required = options.columns ?? DATA_COLUMNS;
    const chunk = Math.min(options.bufferSize ?? READ_BYTES, size + 1);
    const scanner = takeScanner(chunk, size < chunk ? 0 : MAX_ROW_BYTES);
    this.scanner = scanner;
    const { u8, i32 } = scanner;
    this.onRecord = (rec) => {
      const row = this.#row;
      if (row !== undefined) {
        row._set(rec, scanner.delta);
        this.rows++;
        onRow(row);
        return;
      }
      let s = i32[rec + REC_START];
      if (u8[s] === 0xef && u8[s + 1] === 0xbb && u8[s + 2] === 0xbf) s += 3;
      this.header = headerColumns(
        decodeRange(u8, s, i32[rec + REC_END]),
        label,
        required,
      );
      this.#row = new MemscopeRow(this.header, u8, i32, scanner);
      scanner.awaitHeader = false;
      let slot = 0;
      for (const [col, chars] of Object.entries(options.startsWith ?? {})) {
        const k = MEMSCOPE_HEADER.indexOf(col as MemscopeColumn);
        if (k < 0 || chars === undefined || slot > 1) continue;
        if (scanner.filter(slot as 0 | 1, this.header.at[k], chars)) slot++;
      }
    };
  }

  loop(): ChunkLoop {
    return new ChunkLoop(
      this.scanner,
      this.onRecord,
      () => this.header !== undefined,
    );
  }

  /** Hands the scanner back; the feed is done. */
  release(): void {
    giveScanner(this.scanner);
  }

  /** Rewords a scanner limit for a person. */
  error(e: unknown): unknown {
    if (!(e instanceof ScanLimit)) return e;
    if (e.kind !== "no-newline") return rowRunsOn(e.line, this.#label);
    return new MemscopeCsvError(
      `Not a CSV file: ${this.#label} has no line break in its first MiB; pass an msMemScope event log (memscope_dump_*.csv)`,
    );
  }

  finish(bytes: number): ReadSummary {
    if (this.header === undefined) {
      throw new MemscopeCsvError(
        `Not an msMemScope event log: ${this.#label} is empty; pass a memscope_dump_*.csv file`,
      );
    }
    return {
      rows: this.scanner.total - 1,
      bytes,
      header: this.header.names,
    };
  }
}

/**
 * Reads the event log `source` (a path, or a file from `openEventLog`), calling `onRow` with the same cursor for
 * every data row in file order. Memory stays at the read buffers (about 40
 * MiB reserved, a few MiB touched) whatever the file size. Throws
 * {@link MemscopeCsvError} for a file that is not an msMemScope log or lacks
 * a required column; other errors (missing file) come from Deno as they are.
 *
 * @example
 * ```ts
 * import { readMemscopeCsv } from "./mod.ts";
 * const marks: number[] = [];
 * await readMemscopeCsv("memscope_dump.csv", (row) => {
 *   if (row.event === "MSTX" && row.nameEquals("step")) marks.push(row.id);
 * });
 * ```
 */
export async function readMemscopeCsv(
  source: EventLogSource,
  onRow: (row: MemscopeRow) => void,
  options: ReadOptions = {},
): Promise<ReadSummary> {
  const label = labelOf(source, options);
  const feed = new RowFeed(options, label, onRow);
  using opened = await openSource(source);
  const file = opened.file;
  // Reads end early, not in an error, where the file was cut meanwhile. A
  // stream that cannot seek (a library caller's pipe) cannot be cut.
  const sizeAtStart = await file.seek(0, Deno.SeekMode.End).then(
    async (size) => (await file.seek(0, Deno.SeekMode.Start), size),
    () => 0,
  );
  const loop = feed.loop();
  // The next chunk is read while this one is scanned.
  let pending: Promise<number | null> = file.read(loop.target(0));
  try {
    for (;;) {
      const got = await pending;
      loop.place();
      if (got !== null) pending = file.read(loop.target(1 - loop.cur));
      if (!loop.scanChunk(got)) break;
    }
  } catch (e) {
    await pending.catch(() => {});
    throw feed.error(e);
  } finally {
    feed.release();
  }
  if (loop.bytes < sizeAtStart) {
    throw new MemscopeCsvError(`Cannot read ${label}: ${LOG_CUT_REASON}`);
  }
  return feed.finish(loop.bytes);
}

/**
 * Same as {@link readMemscopeCsv} over bytes already in memory (tests, small
 * uploads).
 *
 * @example
 * ```ts
 * import { readMemscopeBytes } from "./mod.ts";
 * const csv = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id," +
 *   "Device Id,Ptr,Attr\n1,MSTX,Mark,\"step\",5,1,1,0,N/A,\n";
 * readMemscopeBytes(new TextEncoder().encode(csv), (r) => console.log(r.name));
 * ```
 */
export function readMemscopeBytes(
  bytes: Uint8Array,
  onRow: (row: MemscopeRow) => void,
  options: ReadOptions = {},
): ReadSummary {
  const feed = new RowFeed(
    options,
    options.label ?? "input",
    onRow,
    bytes.length,
  );
  const loop = feed.loop();
  let off = 0;
  try {
    for (;;) {
      const into = loop.target(loop.cur);
      const n = Math.min(into.length, bytes.length - off);
      into.set(bytes.subarray(off, off + n));
      off += n;
      loop.place();
      if (!loop.scanChunk(n, off >= bytes.length)) break;
    }
  } catch (e) {
    throw feed.error(e);
  } finally {
    feed.release();
  }
  return feed.finish(loop.bytes);
}

/**
 * Calls `onRow` for the rows starting at the given byte offsets (as
 * {@link MemscopeRow.offset} reported them), in ascending offset order,
 * reading only around them: the way back to a few rows of a large file.
 * From a log opened with `openEventLog`, the rows are copied natively in one
 * call (a read awaited per row cost 45 us a row); from a path, or a file
 * that cannot be mapped, each is read on its own (4 KiB, more for a longer
 * one). Either way they are framed here as the scanner frames rows, without
 * the scanner: compiling it took more of a check-leaks than reading its
 * leaks' rows back.
 *
 * @example
 * ```ts
 * import { readMemscopeCsv, readMemscopeRowsAt } from "./mod.ts";
 * const at: number[] = [];
 * await readMemscopeCsv("memscope_dump.csv", (r) => {
 *   if (r.event === "OOM_DETAIL") at.push(r.offset);
 * });
 * await readMemscopeRowsAt("memscope_dump.csv", at, (r) => console.log(r.attr));
 * ```
 */
export async function readMemscopeRowsAt(
  source: EventLogSource,
  offsets: readonly number[],
  onRow: (row: MemscopeRow) => void,
  options: RowsAtOptions = {},
): Promise<void> {
  if (offsets.length === 0) return;
  const label = labelOf(source, options);
  const start = await readMemscopeStart(source, {
    ...options,
    columns: options.columns ?? [],
  });
  // A log without data rows has no row to read back.
  if (start === undefined) return;
  const sorted = Float64Array.from(offsets).sort();
  // Shorter than the rows asked for or than the read they came from: cut
  // since, its rows past the cut gone and the one it ends in cut short.
  const atLeast = Math.max(
    sorted[sorted.length - 1] + 1,
    options.logBytes ?? 0,
  );
  const cut = () =>
    new MemscopeCsvError(`Cannot read ${label}: ${LOG_CUT_REASON}`);
  using opened = await openSource(source);
  const file = opened.file;
  // Not file.stat(): Deno checks fstat against the link's target, which a
  // caller granted only the link may not read; seeking needs no permission.
  const sizeNow = () => file.seek(0, Deno.SeekMode.End);
  const fd = eventLogFd(file);
  const copied = fd === undefined
    ? undefined
    : await copiedRows(fd, sorted, label, options.logBytes);
  if (copied) {
    if (await sizeNow() < atLeast) throw cut();
    // Each copy is framed as the file would be at its offset.
    const rec = new Int32Array(REC_SLOTS);
    let k = 0;
    for (const { bytes, ends } of copied) {
      const row = new MemscopeRow(start.columns, bytes, rec);
      for (let j = 0, from = 0; j < ends.length; from = ends[j++], k++) {
        if (frameOneRow(bytes, [from, ends[j]], true, rec) === "row") {
          row._set(0, sorted[k] - from);
          onRow(row);
        }
      }
    }
    return;
  }
  // The log as the passes read it: one that grew since is read no further.
  const size = Math.min(await sizeNow(), options.logBytes ?? Infinity);
  if (size < atLeast) throw cut();
  const rec = new Int32Array(REC_SLOTS);
  let buf = new Uint8Array(4096);
  let row = new MemscopeRow(start.columns, buf, rec);
  for (const off of sorted) {
    let framed: Framed = "more", got = 0;
    for (let want = 4096;; want = Math.min(want * 4, LONGEST_ROW + 4096)) {
      if (want > buf.length) {
        buf = new Uint8Array(want);
        row = new MemscopeRow(start.columns, buf, rec);
      }
      await file.seek(off, Deno.SeekMode.Start);
      const upto = Math.min(want, size - off);
      got = 0;
      while (got < upto) {
        const n = await file.read(buf.subarray(got, upto));
        if (n === null) throw cut(); // shorter than it was a moment ago
        got += n;
      }
      framed = frameOneRow(buf, [0, got], off + got >= size, rec);
      if (framed !== "more") break;
      if (want > LONGEST_ROW) throw rowTooLong(off, label);
    }
    if (framed === "none") continue;
    // Where its newline is; none where the row ends the log.
    const end = rec[REC_END];
    const newline = end < got && buf[end] === 13 ? end + 1 : end;
    if (refusesRow(off + rec[REC_START], off + newline, newline >= got)) {
      throw rowTooLong(off, label);
    }
    row._set(0, off);
    onRow(row);
  }
  if (await sizeNow() < atLeast) throw cut();
}

/** {@link readMemscopeRowsAt}'s options. */
export interface RowsAtOptions extends ReadOptions {
  /**
   * The bytes of the log when the offsets were read: a log now shorter is
   * refused as cut ("it got shorter while it was read"), not read as it is;
   * one that grew is read no further, so that a row then half written is
   * read back as it was read.
   */
  logBytes?: number;
}

/**
 * The rows at `offsets` (ascending) copied natively, in batches; undefined
 * when the file cannot be mapped (the caller reads it).
 */
async function copiedRows(
  fd: number,
  offsets: Float64Array,
  label: string,
  logBytes: number | undefined,
): Promise<Array<{ bytes: Uint8Array; ends: Uint32Array }> | undefined> {
  let copied: RowsAtResult;
  try {
    copied = await rowsAt(fd, offsets, logBytes ?? 0);
  } catch (e) {
    throw new MemscopeCsvError(
      `Cannot read ${label}: ${(e as Error).message}`,
    );
  }
  if ("unmapped" in copied) return undefined;
  if ("tooLong" in copied) throw rowTooLong(offsets[copied.tooLong], label);
  return copied.batches;
}

/** A row framed; none left before the end of the file; or more bytes needed. */
type Framed = "row" | "none" | "more";

/**
 * Frames the first row of b[from, n) into the scanner's record layout, as the
 * scanner does: a quote flips the state, a comma outside quotes separates
 * (the first 12 kept), a newline outside quotes ends the row, a trailing \r
 * is left out, empty rows are skipped; at the end of the file (`last`) the
 * bytes left are a row.
 */
function frameOneRow(
  b: Uint8Array,
  [from, n]: [number, number],
  last: boolean,
  rec: Int32Array,
): Framed {
  let s = from;
  for (;;) {
    let quoted = false, nsep = 0, e = -1;
    for (let i = s; i < n; i++) {
      const c = b[i];
      if (c === 34) quoted = !quoted;
      else if (quoted) continue;
      else if (c === 44) {
        if (nsep < REC_MAX_SEPS) rec[REC_SEP0 + nsep] = i;
        nsep++;
      } else if (c === 10) {
        e = i;
        break;
      }
    }
    if (e < 0) {
      if (!last) return "more";
      e = n;
    }
    let end = e;
    if (end > s && b[end - 1] === 13) end--;
    if (end > s) {
      rec[REC_START] = s;
      rec[REC_END] = end;
      rec[REC_LINE] = 0;
      rec[REC_NSEP] = Math.min(nsep, REC_MAX_SEPS);
      return "row";
    }
    if (e >= n) return last ? "none" : "more";
    s = e + 1;
  }
}

/** Where the data rows of an event log begin (see {@link readMemscopeStart}). */
export interface DataStart {
  columns: Columns;
  /** Byte offset and line number of the first data row. */
  offset: number;
  line: number;
}

/**
 * The refusal of a row that runs on past MAX_ROW_BYTES at one of the reads,
 * starting on line `line` of `label`: this reader's, and the native
 * passes' that refuse the same rows (ffi/reading/ts_row_room.h).
 */
export function rowRunsOn(line: number, label: string): MemscopeCsvError {
  return runsOn(`line ${line}`, label);
}

/** {@link rowRunsOn} for a row read back, known by its offset. */
function rowTooLong(offset: number, label: string): MemscopeCsvError {
  return runsOn(`byte ${offset}`, label);
}

/** A row at `where` (`line N`, `byte N`) of `label` that runs on. */
function runsOn(where: string, label: string): MemscopeCsvError {
  return new MemscopeCsvError(
    `Row at ${where} of ${label} runs on for over ${
      MAX_ROW_BYTES >> 20
    } MiB (an unbalanced quote?); check the file is a complete msMemScope log`,
  );
}

/** Thrown to stop a read at its first data row. */
const FOUND = Symbol("found");

/**
 * Checks the header of `source` as {@link readMemscopeCsv} does (the same
 * errors) and says where its first data row starts: for a reader of the
 * rows that is not this one. Undefined when the log has no data row.
 *
 * @example
 * ```ts
 * import { readMemscopeStart } from "./mod.ts";
 * const start = await readMemscopeStart("memscope_dump.csv");
 * console.log(start?.offset, start?.line);
 * ```
 */
export async function readMemscopeStart(
  source: EventLogSource,
  options: ReadOptions = {},
): Promise<DataStart | undefined> {
  const plain = await plainStart(source, options);
  if (plain !== null) return plain;
  let start: DataStart | undefined;
  try {
    await readMemscopeCsv(source, (row) => {
      start = { columns: row.columns, offset: row.offset, line: row.line };
      throw FOUND;
    }, options);
  } catch (e) {
    if (e !== FOUND) throw e;
  }
  return start;
}

/**
 * readMemscopeStart's answer for the usual log, whose first line is a
 * header without quotes followed by a data row, read from its first 64 KiB
 * without the scanner (compiling it was half of a small compare's 20 ms of
 * start-up); null for any other log, which the scanner then reads.
 */
async function plainStart(
  source: EventLogSource,
  options: ReadOptions,
): Promise<DataStart | undefined | null> {
  if (typeof source === "string") return null;
  const head = new Uint8Array(64 << 10);
  await source.file.seek(0, Deno.SeekMode.Start);
  let n = 0;
  while (n < head.length) {
    const got = await source.file.read(head.subarray(n));
    if (got === null) break;
    n += got;
  }
  const newline = head.subarray(0, n).indexOf(10);
  if (newline < 0 || head.subarray(0, newline).includes(34)) return null;
  const bom = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  const end = head[newline - 1] === 13 ? newline - 1 : newline;
  if (end <= 0) return null; // an empty first line: the scanner skips it
  const columns = headerColumns(
    decodeRange(head, Math.min(bom, end), end),
    labelOf(source, options),
    options.columns ?? DATA_COLUMNS,
  );
  // Empty lines (nothing but a \r) up to the first data row, as the
  // scanner skips them; a row our 64 KiB cut leaves the scanner to read.
  let offset = newline + 1, line = 2;
  for (;;) {
    if (offset >= n) return n < head.length ? undefined : null;
    const lf = head.subarray(0, n).indexOf(10, offset);
    if (lf < 0 && n === head.length) return null;
    const rowEnd = lf < 0 ? n : lf;
    if (rowEnd - offset > (head[rowEnd - 1] === 13 ? 1 : 0)) break;
    if (lf < 0) return undefined;
    offset = lf + 1;
    line++;
  }
  return { columns, offset, line };
}
