/**
 * One row of an msMemScope event log as a cursor over the read buffer: the
 * reader moves the same object from row to row and fields are decoded only
 * when asked for.
 *
 * @module
 */
import {
  REC_END,
  REC_LINE,
  REC_MAX_SEPS,
  REC_NSEP,
  REC_SEP0,
  REC_START,
  type RowScanner,
} from "./_scan.ts";
import {
  bytesEqual,
  decodeQuoted,
  decodeRange,
  findAttrValue,
  Interner,
  parseAddress,
  parseDecimal,
} from "./_bytes.ts";
import { type Columns, normalise } from "./header.ts";

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

const enc = new TextEncoder();
const SIZE_KEY = enc.encode("size");
const OWNER_KEY = enc.encode("owner");
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

/** The value of a lowercase hex digit's byte, -1 for any other byte. */
function hexDigit(c: number): number {
  return c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
}

/** 8 lowercase hex digits at `s` as a number, or -1. */
function hex8(b: Uint8Array, s: number): number {
  let n = 0;
  for (let i = s; i < s + 8; i++) {
    const d = hexDigit(b[i]);
    if (d < 0) return -1;
    n = (n << 4) | d;
  }
  return n >>> 0;
}

/**
 * Slots of {@link MemscopeRow.memoryNumbers}' output: ID, Timestamp in
 * microseconds, Process Id, Device Id, Ptr, Attr `size` (0 when absent),
 * and 1 when a stack column holds text (0 when both are empty or absent).
 */
export const MEM_ID = 0,
  MEM_TIME_US = 1,
  MEM_PID = 2,
  MEM_DEVICE = 3,
  MEM_PTR = 4,
  MEM_SIZE = 5,
  MEM_STACKS = 6,
  MEM_SLOTS = 7;

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
  #names = new Interner(200);
  #span = new Int32Array(2);
  #nameText = "";
  #nameBytes = new Uint8Array(0);
  /** Parses {@link memoryNumbers}; undefined when the header is unusual. */
  #scanner: RowScanner | undefined;
  /** The header's columns: where each known one sits. */
  readonly columns: Columns;

  /** Internal: the reader makes these. */
  constructor(
    columns: Columns,
    u8: Uint8Array,
    i32: Int32Array,
    scanner?: RowScanner,
  ) {
    this.columns = columns;
    this.#at = columns.at;
    this.#byName = columns.byName;
    this.#u8 = u8;
    this.#i32 = i32;
    const at = columns.at;
    const cols = [
      at[C_ID],
      at[C_TS],
      at[C_PID],
      at[C_DEVICE],
      at[C_PTR],
      at[C_ATTR],
      this.#byName.get(normalise("Call Stack(Python)")) ?? -2,
      this.#byName.get(normalise("Call Stack(C)")) ?? -2,
    ];
    // Columns past the separators the scanner keeps take the slow way.
    if (
      scanner && cols.every((c) => c < REC_MAX_SEPS) &&
      cols.slice(0, 6).every((c) => c >= 0)
    ) {
      scanner.numberColumns(cols);
      this.#scanner = scanner;
    }
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
  /** ID column as written (msMemScope's analyser prints it so). */
  get idText(): string {
    return this.#text(this.#at[C_ID]);
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
  /**
   * Name as {@link name} reads it, but the same string each time the same
   * bytes come again (op and kernel names repeat down a log): no new string
   * per row for callers that key maps by name.
   */
  get nameInterned(): string {
    const col = this.#at[C_NAME];
    if (!this.#field(col)) return "";
    if (this.#quoted) return decodeQuoted(this.#u8, this.#s, this.#e);
    return this.#names.get(this.#u8, this.#s, this.#e);
  }
  /** Timestamp as written (nanoseconds since the epoch exceed 2^53). */
  get timestamp(): string {
    return this.#text(this.#at[C_TS]);
  }
  /**
   * Timestamp split without making a string: writes the number its digits
   * before the last nine make (seconds, for a nanosecond stamp) and the
   * number the last nine make into `out[0]` and `out[1]`, and returns
   * true; false when the field is empty or holds anything but digits.
   */
  timestampSplit(out: Float64Array): boolean {
    if (!this.#field(this.#at[C_TS])) return false;
    const b = this.#u8, s = this.#s, e = this.#e;
    if (s === e) return false;
    const cut = e - 9;
    let sec = 0, nsec = 0;
    for (let i = s; i < e; i++) {
      const d = b[i] - 48;
      if (d < 0 || d > 9) return false;
      if (i < cut) sec = sec * 10 + d;
      else nsec = nsec * 10 + d;
    }
    out[0] = sec;
    out[1] = nsec;
    return true;
  }
  /**
   * Timestamp in whole microseconds, exact, without making a string: a
   * stamp of 18 digits or more is nanoseconds (its last three digits are
   * dropped), a shorter one is taken as microseconds already (old
   * msMemScope files wrote those under the same header); NaN when not a
   * plain decimal.
   */
  get timestampUs(): number {
    if (!this.#field(this.#at[C_TS])) return NaN;
    const s = this.#s, e = this.#e;
    return parseDecimal(this.#u8, s, e - s >= 18 ? e - 3 : e);
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
  /**
   * Ptr when written exactly as msMemScope writes it now (`0x` and 16
   * lowercase hex digits, at most 2^53 - 1), else NaN: text-exact matching
   * of Ptrs can then compare such Ptrs as numbers.
   */
  get ptrHex16(): number {
    if (!this.#field(this.#at[C_PTR]) || this.#e - this.#s !== 18) return NaN;
    const b = this.#u8, s = this.#s;
    if (b[s] !== 48 || b[s + 1] !== 120) return NaN;
    // Two halves of 8 digits in small integers: a double per digit is slow
    // on logs where nearly every row is a MALLOC or FREE.
    const hi = hex8(b, s + 2), lo = hex8(b, s + 10);
    if (hi < 0 || lo < 0 || hi > 0x1fffff) return NaN;
    return hi * 4294967296 + lo;
  }
  /**
   * Ptr when written as `0x` and 1 to 13 lowercase hex digits without a
   * leading zero (`0x0` for zero), as Python's `hex()` writes one, else NaN:
   * such a text and its value are one to one, as for {@link ptrHex16}.
   */
  get ptrHexShort(): number {
    if (!this.#field(this.#at[C_PTR])) return NaN;
    const b = this.#u8, s = this.#s, e = this.#e;
    if (e - s < 3 || e - s > 15 || b[s] !== 48 || b[s + 1] !== 120) {
      return NaN;
    }
    if (b[s + 2] === 48 && e - s > 3) return NaN;
    let n = 0;
    for (let i = s + 2; i < e; i++) {
      const d = hexDigit(b[i]);
      if (d < 0) return NaN;
      n = n * 16 + d;
    }
    return n;
  }
  /**
   * Ptr when written as plain decimal digits without a leading zero (old
   * files), at most 2^53 - 1, else NaN.
   */
  get ptrDecimal(): number {
    if (!this.#field(this.#at[C_PTR])) return NaN;
    const b = this.#u8, s = this.#s, e = this.#e;
    if (e === s || e - s > 16 || (b[s] === 48 && e - s > 1)) return NaN;
    let n = 0;
    for (let i = s; i < e; i++) {
      const d = b[i] - 48;
      if (d < 0 || d > 9) return NaN;
      n = n * 10 + d;
    }
    return n <= Number.MAX_SAFE_INTEGER ? n : NaN;
  }
  /**
   * The size of a MALLOC row as msMemScope's analyser reads it: the digits
   * after the first `size:` in Attr that is followed by one (its
   * `re.search(r'size:(\d+)', attr)`), undefined when there is none.
   * Past 2^53 the digits are rounded once, to the nearest double, as
   * Python's division of its exact integer then rounds.
   */
  get mallocSize(): number | undefined {
    if (!this.#field(this.#at[C_ATTR])) return undefined;
    const b = this.#u8, e = this.#e;
    for (let i = this.#s; i + 5 < e; i++) {
      if (
        b[i] !== 115 || b[i + 1] !== 105 || b[i + 2] !== 122 ||
        b[i + 3] !== 101 || b[i + 4] !== 58
      ) continue; // "size:"
      let j = i + 5, n = 0;
      while (j < e && b[j] >= 48 && b[j] <= 57) n = n * 10 + (b[j++] - 48);
      if (j === i + 5) continue;
      // Each step above rounds once n passes 2^53: read such digits whole.
      return n <= Number.MAX_SAFE_INTEGER
        ? n
        : Number(decodeRange(b, i + 5, j));
    }
    return undefined;
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

  /**
   * The numbers of a memory row in one go (WebAssembly), for readers that
   * keep millions of rows: writes the MEM_* slots of `out` and returns true
   * when every one is written plainly (1 to 16 digits, Ptr as `0x` and 1 to
   * 16 hex digits, at most 2^53 - 1, unquoted, no spaces; `size` may have
   * a `-`; a Device Id below 2^20). The values are then exactly what the
   * getters give (`id`, `timestampUs`, `pid`, `Number(device)`, `ptr`,
   * `size ?? 0`). Returns false for any other row: read it with the
   * getters.
   *
   * @example
   * ```ts
   * import { MEM_PTR, MEM_SLOTS, readMemscopeCsv } from "./mod.ts";
   * const n = new Float64Array(MEM_SLOTS);
   * await readMemscopeCsv("memscope_dump.csv", (r) => {
   *   if (r.event === "MALLOC" && r.memoryNumbers(n)) console.log(n[MEM_PTR]);
   * });
   * ```
   */
  memoryNumbers(out: Float64Array): boolean {
    const sc = this.#scanner;
    if (sc === undefined || !sc.memoryNumbers(this.#rec)) return false;
    const f64 = sc.f64, at = sc.numbersAt;
    for (let k = 0; k < MEM_SLOTS; k++) out[k] = f64[at + k];
    return true;
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
