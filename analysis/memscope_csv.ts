/**
 * Streaming reader and field writer for msMemScope event logs
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
 * import { readMemscopeCsv } from "./memscope_csv.ts";
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
  MAX_ROW_BYTES,
  REC_END,
  REC_LINE,
  REC_MAX_SEPS,
  REC_NSEP,
  REC_SEP0,
  REC_START,
  type RowScanner,
  ScanLimit,
  takeScanner,
} from "./_csv_scan.ts";
import {
  bytesEqual,
  decodeQuoted,
  decodeRange,
  findAttrValue,
  Interner,
  parseAddress,
  parseDecimal,
} from "./_csv_bytes.ts";

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

/** A plain copy of one row, for callers that keep rows. */
export interface MemscopeRecord {
  id: number;
  event: string;
  eventType: string;
  name: string;
  /** As written: nanoseconds since the epoch exceed 2^53. */
  timestamp: string;
  pid: number;
  tid: number;
  /** As written: a number, `N/A`, `cpu` or `host`. */
  device: string;
  ptr: number | bigint | undefined;
  size: number | undefined;
  owner: string | undefined;
  attr: string;
}

/** Options of {@link readMemscopeCsv} and {@link readMemscopeBytes}. */
export interface ReadOptions {
  /** Columns that must be in the header; default {@link DATA_COLUMNS}. */
  columns?: readonly MemscopeColumn[];
  /** Read size in bytes; default 2 MiB. Rows up to 16 MiB are accepted. */
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

const enc = new TextEncoder();
const SIZE_KEY = enc.encode("size");
const OWNER_KEY = enc.encode("owner");

interface Columns {
  /** Header position of each known column, -1 when absent. */
  at: Int32Array;
  byName: Map<string, number>;
  names: string[];
}

function normalise(name: string): string {
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

function headerColumns(
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
    const shown = line.length > 80 ? `${line.slice(0, 80)}...` : line;
    throw new MemscopeCsvError(
      `Not an msMemScope event log: ${label} starts with "${shown}", not a header like ID,Event,Event Type,...; pass a memscope_dump_*.csv file`,
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

const C_ID = 0,
  C_EVENT = 1,
  C_TYPE = 2,
  C_NAME = 3,
  C_TS = 4,
  C_PID = 5,
  C_TID = 6,
  C_DEVICE = 7,
  C_PTR = 8,
  C_ATTR = 9;

/**
 * One row of the log, as a cursor: the reader moves the same object from row
 * to row, so read what you need inside the callback, or call
 * {@link MemscopeRow.toRecord} to keep a copy. Fields are decoded on first
 * use, straight from the read buffer; absent fields read as `""` (numbers as
 * NaN, the rest undefined).
 */
export class MemscopeRow {
  #u8: Uint8Array;
  #i32: Int32Array;
  #rec = 0;
  #delta = 0;
  // The last field located: [#s, #e) without its quotes.
  #s = 0;
  #e = 0;
  #quoted = false;
  #at: Int32Array;
  #byName: Map<string, number>;
  #interner = new Interner();
  #span = new Int32Array(2);
  #nameText = "";
  #nameBytes = new Uint8Array(0);

  /** Internal: the reader makes these. */
  constructor(columns: Columns, u8: Uint8Array, i32: Int32Array) {
    this.#at = columns.at;
    this.#byName = columns.byName;
    this.#u8 = u8;
    this.#i32 = i32;
  }

  /** Internal: points the cursor at scanner record `rec`. */
  _set(rec: number, delta: number): void {
    this.#rec = rec;
    this.#delta = delta;
  }

  /** Byte offset of the row's first byte in the file. */
  get offset(): number {
    return this.#i32[this.#rec + REC_START] + this.#delta;
  }

  /** 1-based line number of the row's first line in the file. */
  get line(): number {
    return this.#i32[this.#rec + REC_LINE];
  }

  /** Locates field `col` (header position) into #s/#e; false if absent. */
  #field(col: number): boolean {
    if (col < 0) return false;
    const i32 = this.#i32, r = this.#rec, b = this.#u8;
    const nsep = i32[r + REC_NSEP];
    let s: number, e: number;
    if (col < REC_MAX_SEPS || nsep < REC_MAX_SEPS) {
      if (col > nsep) return false;
      s = col === 0 ? i32[r + REC_START] : i32[r + REC_SEP0 + col - 1] + 1;
      e = col < nsep ? i32[r + REC_SEP0 + col] : i32[r + REC_END];
    } else {
      // Past the separators the scanner keeps: walk on from the last one.
      const end = i32[r + REC_END];
      s = i32[r + REC_SEP0 + REC_MAX_SEPS - 1] + 1;
      for (let k = REC_MAX_SEPS;; k++) {
        let q = false;
        e = s;
        while (e < end && (q || b[e] !== 44)) {
          if (b[e] === 34) q = !q;
          e++;
        }
        if (k === col) break;
        if (e >= end) return false;
        s = e + 1;
      }
    }
    if (e - s >= 2 && b[s] === 34 && b[e - 1] === 34) {
      this.#s = s + 1;
      this.#e = e - 1;
      this.#quoted = true;
    } else {
      this.#s = s;
      this.#e = e;
      this.#quoted = false;
    }
    return true;
  }

  #text(col: number): string {
    if (!this.#field(col)) return "";
    return this.#quoted
      ? decodeQuoted(this.#u8, this.#s, this.#e)
      : decodeRange(this.#u8, this.#s, this.#e);
  }

  #short(col: number): string {
    if (!this.#field(col)) return "";
    if (this.#quoted) return decodeQuoted(this.#u8, this.#s, this.#e);
    return this.#interner.get(this.#u8, this.#s, this.#e);
  }

  #int(col: number): number {
    if (!this.#field(col)) return NaN;
    return parseDecimal(this.#u8, this.#s, this.#e);
  }

  #attr(key: Uint8Array): boolean {
    if (!this.#field(this.#at[C_ATTR])) return false;
    return findAttrValue(this.#u8, this.#s, this.#e, key, this.#span);
  }

  /** ID column: the event's sequence number (NaN when not a number). */
  get id(): number {
    return this.#int(this.#at[C_ID]);
  }
  /** Event: SYSTEM, MALLOC, FREE, ACCESS, OP_LAUNCH, KERNEL_LAUNCH, MSTX... */
  get event(): string {
    return this.#short(this.#at[C_EVENT]);
  }
  /** Event Type: HAL, PTA, HOST, Mark, ATEN_START, KERNEL_LAUNCH... */
  get eventType(): string {
    return this.#short(this.#at[C_TYPE]);
  }
  /** Name, unquoted (an op, a kernel, an mstx message, or `N/A`). */
  get name(): string {
    return this.#text(this.#at[C_NAME]);
  }
  /** Timestamp as written (nanoseconds since the epoch exceed 2^53). */
  get timestamp(): string {
    return this.#text(this.#at[C_TS]);
  }
  /** Process Id. */
  get pid(): number {
    return this.#int(this.#at[C_PID]);
  }
  /** Thread Id. */
  get tid(): number {
    return this.#int(this.#at[C_TID]);
  }
  /** Device Id as written: a number, `N/A`, `cpu` or `host`. */
  get device(): string {
    return this.#short(this.#at[C_DEVICE]);
  }
  /** Ptr as written (`0x...`, decimal in old files, or `N/A`). */
  get ptrText(): string {
    return this.#text(this.#at[C_PTR]);
  }
  /**
   * Ptr as a number (a bigint above 2^53), undefined for `N/A`. Hex and old
   * decimal both parse.
   */
  get ptr(): number | bigint | undefined {
    if (!this.#field(this.#at[C_PTR])) return undefined;
    return parseAddress(this.#u8, this.#s, this.#e);
  }
  /** `size` from Attr (negative on old FREE rows), undefined if absent. */
  get size(): number | undefined {
    if (!this.#attr(SIZE_KEY)) return undefined;
    const n = parseDecimal(this.#u8, this.#span[0], this.#span[1]);
    return Number.isNaN(n) ? undefined : n;
  }
  /** `owner` from Attr (`A@B@C`); undefined if absent or empty. */
  get owner(): string | undefined {
    if (!this.#attr(OWNER_KEY) || this.#span[0] === this.#span[1]) {
      return undefined;
    }
    return decodeRange(this.#u8, this.#span[0], this.#span[1]);
  }
  /** The raw Attr map, `{k:v,...}`, unquoted. */
  get attr(): string {
    return this.#text(this.#at[C_ATTR]);
  }

  /** Any Attr value by key, as text; undefined if absent. */
  attrValue(key: string): string | undefined {
    if (!this.#attr(enc.encode(key))) return undefined;
    return decodeRange(this.#u8, this.#span[0], this.#span[1]);
  }

  /** Any column by its header name (e.g. `Call Stack(C)`); "" if absent. */
  column(name: string): string {
    const i = this.#byName.get(normalise(name));
    return i === undefined ? "" : this.#text(i);
  }

  /** Whether Name equals `text`, compared on bytes (fast for a repeated text). */
  nameEquals(text: string): boolean {
    if (!this.#field(this.#at[C_NAME])) return false;
    if (text !== this.#nameText) {
      this.#nameText = text;
      this.#nameBytes = enc.encode(text);
    }
    // A quote inside a quoted field is doubled: compare the decoded text.
    if (this.#quoted && text.includes('"')) return this.name === text;
    return bytesEqual(this.#u8, this.#s, this.#e, this.#nameBytes);
  }

  /** A plain copy of the row's fields. */
  toRecord(): MemscopeRecord {
    return {
      id: this.id,
      event: this.event,
      eventType: this.eventType,
      name: this.name,
      timestamp: this.timestamp,
      pid: this.pid,
      tid: this.tid,
      device: this.device,
      ptr: this.ptr,
      size: this.size,
      owner: this.owner,
      attr: this.attr,
    };
  }
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
    const chunk = Math.min(options.bufferSize ?? 2 << 20, size + 1);
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
      this.#row = new MemscopeRow(this.header, u8, i32);
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
    const mib = MAX_ROW_BYTES >> 20;
    return new MemscopeCsvError(
      e.kind === "no-newline"
        ? `Not a CSV file: ${this.#label} has no line break in its first MiB; pass an msMemScope event log (memscope_dump_*.csv)`
        : `Row at line ${e.line} of ${this.#label} runs on for over ${mib} MiB (an unbalanced quote?); check the file is a complete msMemScope log`,
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
 * Reads the event log at `path`, calling `onRow` with the same cursor for
 * every data row in file order. Memory stays at the read buffers (about 40
 * MiB reserved, a few MiB touched) whatever the file size. Throws
 * {@link MemscopeCsvError} for a file that is not an msMemScope log or lacks
 * a required column; other errors (missing file) come from Deno as they are.
 *
 * @example
 * ```ts
 * import { readMemscopeCsv } from "./memscope_csv.ts";
 * const marks: number[] = [];
 * await readMemscopeCsv("memscope_dump.csv", (row) => {
 *   if (row.event === "MSTX" && row.nameEquals("step")) marks.push(row.id);
 * });
 * ```
 */
export async function readMemscopeCsv(
  path: string,
  onRow: (row: MemscopeRow) => void,
  options: ReadOptions = {},
): Promise<ReadSummary> {
  const feed = new RowFeed(options, options.label ?? path, onRow);
  using file = await Deno.open(path, { read: true });
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
  return feed.finish(loop.bytes);
}

/**
 * Same as {@link readMemscopeCsv} over bytes already in memory (tests, small
 * uploads).
 *
 * @example
 * ```ts
 * import { readMemscopeBytes } from "./memscope_csv.ts";
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
 * Every row as a plain {@link MemscopeRecord}, in file order: convenient,
 * but an object per row; prefer {@link readMemscopeCsv} for large files.
 *
 * @example
 * ```ts
 * import { memscopeRecords } from "./memscope_csv.ts";
 * for await (const r of memscopeRecords("memscope_dump.csv")) {
 *   if (r.event === "KERNEL_LAUNCH") console.log(r.name);
 * }
 * ```
 */
export async function* memscopeRecords(
  path: string,
  options: ReadOptions = {},
): AsyncGenerator<MemscopeRecord> {
  const batch: MemscopeRecord[] = [];
  const feed = new RowFeed(
    options,
    options.label ?? path,
    (row) => void batch.push(row.toRecord()),
  );
  using file = await Deno.open(path, { read: true });
  const loop = feed.loop();
  try {
    for (;;) {
      const got = await file.read(loop.target(loop.cur));
      loop.place();
      const more = loop.scanChunk(got);
      yield* batch.splice(0);
      if (!more) break;
    }
  } catch (e) {
    throw feed.error(e);
  } finally {
    feed.release();
  }
  feed.finish(loop.bytes);
}

/**
 * Calls `onRow` for the rows starting at the given byte offsets (as
 * {@link MemscopeRow.offset} reported them), in ascending offset order,
 * reading only around them: the way back to a few rows of a large file.
 *
 * @example
 * ```ts
 * import { readMemscopeCsv, readMemscopeRowsAt } from "./memscope_csv.ts";
 * const at: number[] = [];
 * await readMemscopeCsv("memscope_dump.csv", (r) => {
 *   if (r.event === "OOM_DETAIL") at.push(r.offset);
 * });
 * await readMemscopeRowsAt("memscope_dump.csv", at, (r) => console.log(r.attr));
 * ```
 */
export async function readMemscopeRowsAt(
  path: string,
  offsets: readonly number[],
  onRow: (row: MemscopeRow) => void,
  options: ReadOptions = {},
): Promise<void> {
  const sorted = [...offsets].sort((a, b) => a - b);
  let header = true;
  const feed = new RowFeed(
    { ...options, columns: options.columns ?? [] },
    options.label ?? path,
    (row) => {
      if (!header) onRow(row);
    },
  );
  const sc = feed.scanner;
  using file = await Deno.open(path, { read: true });
  const size = (await file.stat()).size;
  const at = sc.data(0) - sc.room;
  const room = sc.room + sc.chunk;
  // Window of the file in memory: bytes [winStart, winStart + winLen).
  let winStart = 0, winLen = 0;
  const load = async (from: number, want: number) => {
    winStart = from;
    winLen = 0;
    await file.seek(from, Deno.SeekMode.Start);
    while (winLen < want) {
      const n = await file.read(sc.u8.subarray(at + winLen, at + want));
      if (n === null) break;
      winLen += n;
    }
  };
  try {
    for (const off of [0, ...sorted]) {
      let want = 64 << 10;
      for (;;) {
        if (off < winStart || off >= winStart + winLen) {
          await load(off, Math.min(want, room));
        }
        const a = at + off - winStart;
        const last = winStart + winLen >= size;
        sc.delta = winStart - at;
        sc.line = 0;
        const before = feed.rows + (feed.header ? 0 : -1);
        sc.scan(a, at + winLen, last, feed.onRecord, 1);
        const done = feed.rows + (feed.header ? 0 : -1) > before || last;
        if (done) break;
        if (want >= room) throw new ScanLimit("row-too-long", 0);
        want *= 4;
        winLen = 0;
      }
      header = false;
    }
  } catch (e) {
    throw feed.error(e);
  } finally {
    feed.release();
  }
}

/**
 * One CSV field as msMemScope (and Python's csv module) would write it:
 * quoted when it holds a comma, a quote, a newline or outer blanks, with
 * quotes doubled; numbers and bigints as decimal; undefined and null empty.
 *
 * @example
 * ```ts
 * import { csvField } from "./memscope_csv.ts";
 * csvField('say "hi", then go'); // "\"say \"\"hi\"\", then go\""
 * ```
 */
export function csvField(
  value: string | number | bigint | undefined | null,
): string {
  if (value === undefined || value === null) return "";
  const s = String(value);
  if (/[",\r\n]/.test(s) || s !== s.trim()) {
    return `"${s.replaceAll('"', '""')}"`;
  }
  return s;
}

/**
 * A CSV line (no newline) from fields, each through {@link csvField}.
 *
 * @example
 * ```ts
 * import { csvRow } from "./memscope_csv.ts";
 * csvRow([1, "MSTX", "Mark", "a,b"]); // '1,MSTX,Mark,"a,b"'
 * ```
 */
export function csvRow(
  fields: ReadonlyArray<string | number | bigint | undefined | null>,
): string {
  return fields.map(csvField).join(",");
}

/**
 * An address as msMemScope writes Ptr: `0x` and 16 lowercase hex digits.
 *
 * @example
 * ```ts
 * import { formatPtr } from "./memscope_csv.ts";
 * formatPtr(0x12c041400000); // "0x000012c041400000"
 * ```
 */
export function formatPtr(addr: number | bigint): string {
  return `0x${addr.toString(16).padStart(16, "0")}`;
}
