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
  /** Read buffer size in bytes; default 4 MiB. Lines longer grow it. */
  bufferSize?: number;
  /** Shown in error messages instead of the path. */
  label?: string;
}

/** What a read went through. */
export interface ReadSummary {
  /** Data rows delivered (empty lines not counted). */
  rows: number;
  /** Bytes of the file. */
  bytes: number;
  /** Column names as the header wrote them. */
  header: string[];
}

const MAX_ROW_BYTES = 64 << 20;
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
      `Not an msMemScope event log: ${label} starts with "${shown}" instead of the header ${
        MEMSCOPE_HEADER.join(",")
      }; pass a memscope_dump_*.csv file`,
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
 * {@link MemscopeRow.toRecord} to keep a copy. Fields are split and decoded
 * on first use; absent fields read as `""` (numbers as NaN).
 */
export class MemscopeRow {
  #b: Uint8Array = new Uint8Array(0);
  #s = 0;
  #e = 0;
  #split = 0;
  #next = 0;
  #fs: Int32Array;
  #fe: Int32Array;
  #dq: Uint8Array;
  #at: Int32Array;
  #byName: Map<string, number>;
  #interner: Interner;
  #span = new Int32Array(2);
  #nameText = "";
  #nameBytes = new Uint8Array(0);
  /** Byte offset of the row's first byte in the file. */
  offset = 0;
  /** 1-based line number of the row's first line in the file. */
  line = 0;

  /** Internal: the reader makes these. */
  constructor(columns: Columns, interner: Interner) {
    const n = columns.names.length + 1;
    this.#fs = new Int32Array(n);
    this.#fe = new Int32Array(n);
    this.#dq = new Uint8Array(n);
    this.#at = columns.at;
    this.#byName = columns.byName;
    this.#interner = interner;
  }

  /** Internal: points the cursor at bytes [s, e) of `b`. */
  _set(b: Uint8Array, s: number, e: number, offset: number, line: number) {
    this.#b = b;
    this.#s = s;
    this.#e = e;
    this.#split = 0;
    this.#next = s;
    this.offset = offset;
    this.line = line;
  }

  /** Splits fields up to header position `col`; returns false if absent. */
  #field(col: number): boolean {
    if (col < 0) return false;
    const b = this.#b, e = this.#e, fs = this.#fs, fe = this.#fe;
    let n = this.#split, p = this.#next;
    while (n <= col) {
      if (p > e) return false;
      if (p < e && b[p] === 34) {
        let q = p + 1, dq = 0;
        for (;;) {
          while (q < e && b[q] !== 34) q++;
          if (q + 1 < e && b[q + 1] === 34) {
            dq = 1;
            q += 2;
            continue;
          }
          break;
        }
        fs[n] = p + 1;
        fe[n] = q;
        this.#dq[n] = dq;
        p = q + 1;
        while (p < e && b[p] !== 44) p++;
      } else {
        fs[n] = p;
        while (p < e && b[p] !== 44) p++;
        fe[n] = p;
        this.#dq[n] = 0;
      }
      p++;
      n++;
    }
    this.#split = n;
    this.#next = p;
    return true;
  }

  #text(col: number): string {
    if (!this.#field(col)) return "";
    return this.#dq[col]
      ? decodeQuoted(this.#b, this.#fs[col], this.#fe[col])
      : decodeRange(this.#b, this.#fs[col], this.#fe[col]);
  }

  #short(col: number): string {
    if (!this.#field(col)) return "";
    if (this.#dq[col]) {
      return decodeQuoted(this.#b, this.#fs[col], this.#fe[col]);
    }
    return this.#interner.get(this.#b, this.#fs[col], this.#fe[col]);
  }

  #int(col: number): number {
    if (!this.#field(col)) return NaN;
    return parseDecimal(this.#b, this.#fs[col], this.#fe[col]);
  }

  #attr(key: Uint8Array): boolean {
    const col = this.#at[C_ATTR];
    if (!this.#field(col)) return false;
    return findAttrValue(
      this.#b,
      this.#fs[col],
      this.#fe[col],
      key,
      this.#span,
    );
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
    const col = this.#at[C_PTR];
    if (!this.#field(col)) return undefined;
    return parseAddress(this.#b, this.#fs[col], this.#fe[col]);
  }
  /** `size` from Attr (negative on old FREE rows), undefined if absent. */
  get size(): number | undefined {
    if (!this.#attr(SIZE_KEY)) return undefined;
    const n = parseDecimal(this.#b, this.#span[0], this.#span[1]);
    return Number.isNaN(n) ? undefined : n;
  }
  /** `owner` from Attr (`A@B@C`); undefined if absent or empty. */
  get owner(): string | undefined {
    if (!this.#attr(OWNER_KEY) || this.#span[0] === this.#span[1]) {
      return undefined;
    }
    return decodeRange(this.#b, this.#span[0], this.#span[1]);
  }
  /** The raw Attr map, `{k:v,...}`, unquoted. */
  get attr(): string {
    return this.#text(this.#at[C_ATTR]);
  }

  /** Any Attr value by key, as text; undefined if absent. */
  attrValue(key: string): string | undefined {
    if (!this.#attr(enc.encode(key))) return undefined;
    return decodeRange(this.#b, this.#span[0], this.#span[1]);
  }

  /** Any column by its header name (e.g. `Call Stack(C)`); "" if absent. */
  column(name: string): string {
    const i = this.#byName.get(normalise(name));
    return i === undefined ? "" : this.#text(i);
  }

  /** Whether Name equals `text`, compared on bytes (fast for a repeated text). */
  nameEquals(text: string): boolean {
    const col = this.#at[C_NAME];
    if (!this.#field(col)) return false;
    if (this.#dq[col]) return this.name === text;
    if (text !== this.#nameText) {
      this.#nameText = text;
      this.#nameBytes = enc.encode(text);
    }
    return bytesEqual(this.#b, this.#fs[col], this.#fe[col], this.#nameBytes);
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
 * Cuts the bytes into rows: the first non-empty line is the header, every
 * later non-empty line a row handed to `onRow` through the one cursor.
 */
class Framer {
  row!: MemscopeRow;
  header: Columns | undefined;
  rows = 0;
  line = 1;
  base = 0;
  #label: string;
  #required: readonly MemscopeColumn[];
  #interner = new Interner();

  constructor(label: string, required: readonly MemscopeColumn[]) {
    this.#label = label;
    this.#required = required;
  }

  /**
   * Frames rows in `b[from, b.length)`; returns where the first incomplete
   * row starts (`b.length` when none is left). With `last`, whatever remains
   * is the final row.
   */
  run(
    b: Uint8Array,
    from: number,
    last: boolean,
    onRow: (row: MemscopeRow) => void,
  ): number {
    const end = b.length;
    let p = from, nq = -2;
    while (p < end) {
      let nl = b.indexOf(10, p);
      // A quoted field may hold newlines: extend until the quotes balance.
      if (nq < p && nq !== -1) nq = b.indexOf(34, p);
      let lines = 1;
      if (nq !== -1 && (nl === -1 || nq < nl)) {
        let odd = false;
        for (;;) {
          while (nq !== -1 && (nl === -1 || nq < nl)) {
            odd = !odd;
            nq = b.indexOf(34, nq + 1);
          }
          if (!odd || nl === -1) break;
          nl = b.indexOf(10, nl + 1);
          lines++;
        }
        if (odd && !last) return this.#incomplete(p, end, true);
      }
      if (nl === -1 && !last) return this.#incomplete(p, end, false);
      const stop = nl === -1 ? end : nl;
      let e = stop;
      if (e > p && b[e - 1] === 13) e--;
      if (this.header === undefined) {
        let s = p;
        if (b[s] === 0xef && b[s + 1] === 0xbb && b[s + 2] === 0xbf) s += 3;
        if (e > s) {
          this.header = headerColumns(
            decodeRange(b, s, e),
            this.#label,
            this.#required,
          );
          this.row = new MemscopeRow(this.header, this.#interner);
        }
      } else if (e > p) {
        this.row._set(b, p, e, this.base + p, this.line);
        this.rows++;
        onRow(this.row);
      }
      this.line += lines;
      p = stop + 1;
    }
    return end;
  }

  /** Leaves a partial row for the next read, unless it cannot be a row. */
  #incomplete(p: number, end: number, quoted: boolean): number {
    if (this.header === undefined && end - p > 1 << 20) {
      throw new MemscopeCsvError(
        `Not a CSV file: ${this.#label} has no line break in its first MiB; pass an msMemScope event log (memscope_dump_*.csv)`,
      );
    }
    if (end - p > MAX_ROW_BYTES) {
      throw new MemscopeCsvError(
        quoted
          ? `Unbalanced quote in ${this.#label} at line ${this.line}: a quoted field runs on for over ${
            MAX_ROW_BYTES >> 20
          } MiB; check the file is a complete msMemScope log`
          : `Line ${this.line} of ${this.#label} is over ${
            MAX_ROW_BYTES >> 20
          } MiB long; check the file is an msMemScope log`,
      );
    }
    return p;
  }

  finish(bytes: number): ReadSummary {
    if (this.header === undefined) {
      throw new MemscopeCsvError(
        `Not an msMemScope event log: ${this.#label} is empty; pass a memscope_dump_*.csv file`,
      );
    }
    return { rows: this.rows, bytes, header: this.header.names };
  }
}

async function* framedChunks(
  path: string,
  onRow: (row: MemscopeRow) => void,
  options: ReadOptions,
): AsyncGenerator<void, ReadSummary> {
  const framer = new Framer(
    options.label ?? path,
    options.columns ?? DATA_COLUMNS,
  );
  let buf = new Uint8Array(options.bufferSize ?? 4 << 20);
  using file = await Deno.open(path, { read: true });
  let len = 0, bytes = 0;
  for (;;) {
    if (len === buf.length) {
      const bigger = new Uint8Array(buf.length * 2);
      bigger.set(buf);
      buf = bigger;
    }
    const n = await file.read(buf.subarray(len));
    const last = n === null;
    if (n !== null) {
      len += n;
      bytes += n;
    }
    const done = framer.run(buf.subarray(0, len), 0, last, onRow);
    if (last) break;
    buf.copyWithin(0, done, len);
    framer.base += done;
    len -= done;
    yield;
  }
  return framer.finish(bytes);
}

/**
 * Reads the event log at `path`, calling `onRow` with the same cursor for
 * every data row in file order. Memory stays at the read buffer whatever the
 * file size. Throws {@link MemscopeCsvError} for a file that is not an
 * msMemScope log or lacks a required column; other errors (missing file)
 * come from Deno as they are.
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
  const chunks = framedChunks(path, onRow, options);
  for (;;) {
    const r = await chunks.next();
    if (r.done) return r.value;
  }
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
  const framer = new Framer(
    options.label ?? "input",
    options.columns ?? DATA_COLUMNS,
  );
  framer.run(bytes, 0, true, onRow);
  return framer.finish(bytes.length);
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
  const chunks = framedChunks(
    path,
    (row) => void batch.push(row.toRecord()),
    options,
  );
  for (;;) {
    const r = await chunks.next();
    yield* batch.splice(0);
    if (r.done) return;
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
