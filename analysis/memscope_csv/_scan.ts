/**
 * Drives the WebAssembly row scanner (`_scan.wat`) over a file or bytes:
 * reads land straight in the scanner's memory, two regions alternate so the
 * next read runs while this one is scanned, and a row cut by a chunk end is
 * moved in front of the next chunk. Callers get the scanner's records
 * (offsets into {@link RowScanner.u8}); see the .wat for their layout.
 *
 * @module
 */
import { CSV_SCAN_WASM } from "./_scan_wasm.ts";

/** Record layout: slot offsets in Int32 units, and the record size. */
export const REC_START = 0,
  REC_END = 1,
  REC_LINE = 2,
  REC_NSEP = 3,
  REC_SEP0 = 4,
  REC_SLOTS = 16,
  REC_MAX_SEPS = 12;

const OUT_ROWS = 16384;
const OUT_BYTES = OUT_ROWS * REC_SLOTS * 4;
/** Two 256-bit character maps of the row filter. */
const MAPS_AT = OUT_BYTES;
/** memoryNumbers' 8 column positions (i32) and 7 results (f64). */
const NUM_COLS_AT = MAPS_AT + 64;
const NUM_OUT_AT = MAPS_AT + 128;
/** Room in front of each chunk for a row cut by the previous chunk's end. */
export const MAX_ROW_BYTES = 16 << 20;
/** The reads a file is scanned in (read.ts), unless a caller asks otherwise. */
export const READ_BYTES = 2 << 20;
/** No row longer is taken, wherever the reads end in it (refusesRow). */
export const LONGEST_ROW = MAX_ROW_BYTES + READ_BYTES;

/**
 * Whether a file's reader refuses the row starting at file offset `start`
 * that is unfinished at offset `upto`, its newline not read yet (`eof`: the
 * file ends there, the row with it): the row is cut by the end of a read of
 * READ_BYTES over MAX_ROW_BYTES into it. So a row of 16 to 18 MiB is
 * refused or not by where the reads end in it. The native readers refuse
 * the same rows (ffi/reading/ts_row_room.h, this rule and LONGEST_ROW in
 * C).
 */
export function refusesRow(start: number, upto: number, eof: boolean): boolean {
  const b = eof ? upto : Math.floor(upto / READ_BYTES) * READ_BYTES;
  return b > start && b - start > MAX_ROW_BYTES;
}
const PAGE = 65536;

let compiled: WebAssembly.Module | undefined;

function wasmModule(): WebAssembly.Module {
  if (compiled === undefined) {
    const bin = atob(CSV_SCAN_WASM);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    compiled = new WebAssembly.Module(bytes);
  }
  return compiled;
}

type ScanFn = (
  p: number,
  end: number,
  last: number,
  line: number,
  out: number,
  max: number,
  f1: number,
  f2: number,
  maps: number,
) => number;

type NumbersFn = (rec: number, cols: number, out: number) => number;

/** Why a scan gave up on the input; the reader words the message. */
export class ScanLimit extends Error {
  constructor(
    readonly kind: "no-newline" | "row-too-long",
    readonly line: number,
  ) {
    super(kind);
  }
}

/**
 * One scanner instance and its memory: the record area, then two regions of
 * [room for a cut row | chunk].
 */
export class RowScanner {
  readonly u8: Uint8Array;
  readonly i32: Int32Array;
  /** Results of {@link memoryNumbers}, from index {@link numbersAt}. */
  readonly f64: Float64Array;
  readonly numbersAt = NUM_OUT_AT >> 3;
  readonly chunk: number;
  /** File offset of memory address 0 for the chunk being scanned. */
  delta = 0;
  /** Line number of the next row. */
  line = 1;
  /** Until the header is seen: one row per call, no filter. */
  awaitHeader = true;
  #f1 = -1;
  #f2 = -1;
  #scan: ScanFn;
  #numbers: NumbersFn;
  #stop: WebAssembly.Global;
  #line: WebAssembly.Global;
  #total: WebAssembly.Global;

  /** Room before each chunk for a row cut by the previous chunk. */
  readonly room: number;

  /**
   * `room` can be small when no row will ever be cut (the whole input fits
   * one chunk).
   */
  constructor(chunk: number, room = MAX_ROW_BYTES) {
    this.chunk = Math.max(PAGE, Math.ceil(chunk / PAGE) * PAGE);
    this.room = Math.ceil(room / PAGE) * PAGE;
    const instance = new WebAssembly.Instance(wasmModule());
    const ex = instance.exports as Record<string, unknown>;
    const memory = ex.memory as WebAssembly.Memory;
    const need = OUT_BYTES + PAGE + 2 * (this.room + this.chunk) + PAGE;
    memory.grow(Math.ceil((need - memory.buffer.byteLength) / PAGE));
    this.u8 = new Uint8Array(memory.buffer);
    this.i32 = new Int32Array(memory.buffer);
    this.f64 = new Float64Array(memory.buffer);
    this.#scan = ex.scan as ScanFn;
    this.#numbers = ex.memoryNumbers as NumbersFn;
    this.#stop = ex.stop as WebAssembly.Global;
    this.#line = ex.line as WebAssembly.Global;
    this.#total = ex.total as WebAssembly.Global;
  }

  /** Readies a used scanner for another input. */
  reset(): void {
    this.delta = 0;
    this.line = 1;
    this.awaitHeader = true;
    this.#f1 = this.#f2 = -1;
    this.#total.value = 0;
  }

  /** Rows seen so far, delivered or filtered out. */
  get total(): number {
    return this.#total.value as number;
  }

  /**
   * Keeps only rows whose field at header position `field` starts with one
   * of `chars` (ASCII); `slot` 0 or 1 (two filters at most). Returns false,
   * filtering nothing, when the field or a character is out of reach.
   */
  filter(slot: 0 | 1, field: number, chars: string): boolean {
    const ascii = [...chars].every((c) => c > "\0" && c <= "\x7f");
    if (field < 0 || field >= REC_MAX_SEPS || !chars || !ascii) return false;
    const map = this.u8.subarray(MAPS_AT + slot * 32, MAPS_AT + slot * 32 + 32);
    map.fill(0);
    for (const ch of chars) {
      const c = ch.charCodeAt(0);
      map[c >> 3] |= 1 << (c & 7);
    }
    if (slot === 0) this.#f1 = field;
    else this.#f2 = field;
    return true;
  }

  /**
   * Header positions of ID, Timestamp, Process Id, Device Id, Ptr, Attr and
   * the two stack columns (-2 when absent), for {@link memoryNumbers}.
   */
  numberColumns(cols: readonly number[]): void {
    this.i32.set(cols, NUM_COLS_AT >> 2);
  }

  /**
   * Parses the numbers of record `rec` (see `memoryNumbers` in the .wat)
   * into {@link f64} from {@link numbersAt}; false when one is not plain.
   */
  memoryNumbers(rec: number): boolean {
    return this.#numbers(rec << 2, NUM_COLS_AT, NUM_OUT_AT) === 1;
  }

  /** Address where region `k`'s chunk data starts. */
  data(k: number): number {
    return OUT_BYTES + PAGE + k * (this.room + this.chunk) + this.room;
  }

  /**
   * Scans [s, e), calling `onRecord` with each record's index into
   * {@link i32}; returns the address of the first unfinished row (`e` when
   * none, or with `last`). At most `max` rows when given.
   */
  scan(
    s: number,
    e: number,
    last: boolean,
    onRecord: (rec: number) => void,
    max = Infinity,
  ): number {
    let p = s;
    for (;;) {
      const head = this.awaitHeader;
      const want = head ? 1 : Math.min(OUT_ROWS, max);
      const rows = this.#scan(
        p,
        e,
        last ? 1 : 0,
        this.line,
        0,
        want,
        head ? -1 : this.#f1,
        head ? -1 : this.#f2,
        MAPS_AT,
      );
      p = this.#stop.value as number;
      this.line = this.#line.value as number;
      for (let r = 0; r < rows; r++) onRecord(r * REC_SLOTS);
      max -= rows;
      if (head && rows === 1 && max > 0 && p < e) continue;
      if (rows < want || max <= 0 || p >= e) return Math.min(p, e);
    }
  }
}

/**
 * The chunk loop shared by the file and the in-memory readers: a chunk lands
 * in one region while the cut row left by the previous chunk waits in the
 * other; {@link place} moves that row in front of the new chunk, after which
 * the other region is free for the next read, and {@link scanChunk} scans.
 */
export class ChunkLoop {
  cur = 0;
  bytes = 0;
  #tailAt = 0;
  #tailLen = 0;
  #scanner: RowScanner;
  #onRecord: (rec: number) => void;
  #haveHeader: () => boolean;

  constructor(
    scanner: RowScanner,
    onRecord: (rec: number) => void,
    haveHeader: () => boolean,
  ) {
    this.#scanner = scanner;
    this.#onRecord = onRecord;
    this.#haveHeader = haveHeader;
  }

  /** Where the read of region `k` goes. */
  target(k: number): Uint8Array {
    const d = this.#scanner.data(k);
    return this.#scanner.u8.subarray(d, d + this.#scanner.chunk);
  }

  /** Moves the cut row in front of the chunk that landed in region cur. */
  place(): void {
    const d = this.#scanner.data(this.cur);
    const n = this.#tailLen;
    if (n) this.#scanner.u8.copyWithin(d - n, this.#tailAt, this.#tailAt + n);
  }

  /**
   * Scans the `n` new bytes (null: none, the input ended); with `last`, they
   * end the input. Returns false when done.
   */
  scanChunk(got: number | null, last = got === null): boolean {
    const sc = this.#scanner, n = got ?? 0;
    const d = sc.data(this.cur);
    sc.delta = this.bytes - d;
    const stop = sc.scan(d - this.#tailLen, d + n, last, this.#onRecord);
    this.bytes += n;
    if (last) return false;
    this.#tailAt = stop;
    this.#tailLen = d + n - stop;
    if (!this.#haveHeader() && this.#tailLen > 1 << 20) {
      throw new ScanLimit("no-newline", sc.line);
    }
    if (this.#tailLen > sc.room) {
      throw new ScanLimit("row-too-long", sc.line);
    }
    this.cur = 1 - this.cur;
    return true;
  }
}

// Scanners are reused: a new one reserves tens of MiB that only a full GC
// gives back, and check_leaks may read a file several times in a row.
const idle: RowScanner[] = [];

/** A scanner with this geometry, reused when one is idle. */
export function takeScanner(chunk: number, room: number): RowScanner {
  const probe = {
    chunk: Math.max(PAGE, Math.ceil(chunk / PAGE) * PAGE),
    room: Math.ceil(room / PAGE) * PAGE,
  };
  const i = idle.findIndex((s) =>
    s.chunk === probe.chunk && s.room === probe.room
  );
  if (i < 0) return new RowScanner(chunk, room);
  const s = idle.splice(i, 1)[0];
  s.reset();
  return s;
}

/** Gives a scanner back for reuse (two are kept at most). */
export function giveScanner(s: RowScanner): void {
  if (idle.length < 2 && !idle.includes(s)) idle.push(s);
}
