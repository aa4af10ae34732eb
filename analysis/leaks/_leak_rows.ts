/**
 * The memory rows check_leaks keeps, in growable typed arrays (about 41
 * bytes a row, no object per row), and the replay that turns the rows of one
 * device's window into leaks.
 *
 * @module
 */
// From the files, not the folder's face: check-leaks loads only what it
// runs, as start-up is part of every check.
import {
  type MemscopeColumn,
  MemscopeCsvError,
} from "../memscope_csv/header.ts";
import type { MemscopeRow } from "../memscope_csv/row.ts";
import { type LeakReplayed, leakReplayWindows } from "../../ffi/bindings.ts";

const MALLOC = 1, FREE = 2;
export { FREE, MALLOC };

/** Columns check_leaks reads; the reader reports any that is missing. */
export const LEAK_COLUMNS: readonly MemscopeColumn[] = [
  "ID",
  "Event",
  "Event Type",
  "Name",
  "Device Id",
  "Ptr",
  "Attr",
];

/** MALLOC and FREE rows of one pool, in file order. */
export class LeakRows {
  length = 0;
  id!: Float64Array;
  ptr!: Float64Array;
  size!: Float64Array;
  offset!: Float64Array;
  line!: Uint32Array;
  device!: Uint32Array;
  kind!: Uint8Array;
  /**
   * Every row's ID is written as String(id) gives it and its Ptr as
   * {@link PtrKeys.text} spells its key: what a leak prints needs no read
   * of its row. Set by the pass that filled the rows (native passes know).
   */
  textsFromValues = false;

  /** See {@link halfAt}. */
  readonly #halfAt: number;
  /** Where the views begin in the arrays whole ({@link skip}). */
  #first = 0;
  /** The arrays whole. */
  #whole!: [
    Uint8Array,
    Uint32Array,
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
    Uint32Array,
  ];

  /**
   * `budget`: most rows it will hold (Infinity: no limit); `expect`: rows
   * to make room for at once (untouched room costs address space only, and
   * growing copies every array); `halves`: room past those for the second
   * half of a native pass that splits the log, half the budget at most.
   */
  constructor(readonly budget: number, expect = 1024, { halves = false } = {}) {
    const room = Math.max(1, Math.min(expect, budget));
    this.#halfAt = halves ? room : 0;
    this.#carve(
      room + (halves ? Math.min(room, Math.floor(budget / 2) + 1) : 0),
    );
  }

  /**
   * Where a native pass that splits the log between two threads puts the
   * second half's rows in the arrays (leak_scan.c half_at): made with
   * `halves`, while the arrays are seen whole; 0 else.
   */
  get halfAt(): number {
    return this.#first === 0 ? this.#halfAt : 0;
  }

  /** Forgets every row, keeping the arrays (whole) for the next pass. */
  clear(): void {
    this.length = 0;
    this.textsFromValues = false;
    this.#view(0);
  }

  /**
   * The rows from row `n` of the arrays as now seen on: where a native pass
   * left them.
   */
  skip(n: number): void {
    if (n) this.#view(this.#first + n);
  }

  #view(first: number): void {
    this.#first = first;
    const [kind, device, id, ptr, size, offset, line] = this.#whole;
    this.kind = kind.subarray(first);
    this.device = device.subarray(first);
    this.id = id.subarray(first);
    this.ptr = ptr.subarray(first);
    this.size = size.subarray(first);
    this.offset = offset.subarray(first);
    this.line = line.subarray(first);
  }

  /** Makes room for `n` more rows at once (within the budget). */
  reserve(n: number): void {
    const want = Math.min(this.length + n, this.budget);
    if (want > this.id.length) {
      this.#grow(Math.min(Math.max(want, this.id.length * 2), this.budget));
    }
  }

  /** Adds a row; false (and nothing kept) once the budget is reached. */
  push(
    kind: number,
    device: number,
    id: number,
    ptr: number,
    size: number,
    offset: number,
    line: number,
  ): boolean {
    const n = this.length;
    // Room past the budget is the second half's (halfAt): not for push.
    if (n >= this.budget) return false;
    if (n === this.id.length) this.#grow(Math.min(n * 2, this.budget));
    this.kind[n] = kind;
    this.device[n] = device;
    this.id[n] = id;
    this.ptr[n] = ptr;
    this.size[n] = size;
    this.offset[n] = offset;
    this.line[n] = line;
    this.length = n + 1;
    return true;
  }

  /**
   * Room for `n` rows, every array a view of one buffer: V8 answers large
   * buffers made one after another with a collection ("external memory
   * pressure": six 16 MB arrays, one; one 96 MB buffer, none), and the first
   * collection of a check-leaks command took 3.7 ms when these were seven.
   */
  #carve(n: number): void {
    this.#first = 0;
    const buffer = new ArrayBuffer(n * ROW_BYTES);
    const f64 = (k: number) => new Float64Array(buffer, k * 8 * n, n);
    this.id = f64(0);
    this.ptr = f64(1);
    this.size = f64(2);
    this.offset = f64(3);
    this.line = new Uint32Array(buffer, 32 * n, n);
    this.device = new Uint32Array(buffer, 36 * n, n);
    this.kind = new Uint8Array(buffer, 40 * n, n);
    this.#whole = [
      this.kind,
      this.device,
      this.id,
      this.ptr,
      this.size,
      this.offset,
      this.line,
    ];
  }

  #grow(cap: number) {
    const { id, ptr, size, offset, line, device, kind } = this;
    this.#carve(cap);
    this.id.set(id);
    this.ptr.set(ptr);
    this.size.set(size);
    this.offset.set(offset);
    this.line.set(line);
    this.device.set(device);
    this.kind.set(kind);
  }
}

/** Bytes a row takes: four doubles, two 32-bit numbers, one byte. */
const ROW_BYTES = 4 * 8 + 2 * 4 + 1;

/** The three marks of a device's window: IDs of A, B and C. */
export interface Window {
  a: number;
  b: number;
  c: number;
}

/** Mixes a Ptr key (any double) into 32 bits: addresses are aligned. */
export function mixKey(key: number): number {
  let h = (key >>> 0) ^ Math.imul(Math.floor(key / 4294967296), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Replays each device's rows of `windows` in ID order (file order among
 * equal IDs), as msMemScope's analyser does, and returns, in the order of
 * `windows`, the indices of the blocks each leaves pending, ordered by ID:
 * - a MALLOC with A <= ID <= B becomes pending; pending blocks are keyed by
 *   ID, so a later MALLOC with the same ID replaces the earlier one;
 * - a FREE with A <= ID <= C clears every pending block at its Ptr.
 *
 * The replay itself is native (`ffi/daemon/leak_replay.c`): over a million
 * rows it took a quarter of the whole command in JavaScript. All windows
 * go in one call (each device's rows listed once there, the windows shared
 * by two threads): a call each, with the listing in JavaScript, took 20-60
 * ms of a 200-device log's check. An error is the first device's in the
 * order of `windows`, as one replay at a time would meet it.
 */
export async function replayWindows(
  rows: LeakRows,
  windows: Map<number, Window>,
): Promise<Uint32Array[]> {
  const found = await leakReplayWindows(
    rows,
    rows.length,
    [...windows].map(([device, w]) => ({ device, ...w })),
  );
  return found.map((f) => leakedOrThrow(rows, f));
}

/** A replay's blocks, or why it had none, thrown. */
function leakedOrThrow(rows: LeakRows, found: LeakReplayed): Uint32Array {
  if (found instanceof Uint32Array) return found;
  if ("outOfMemory" in found) {
    throw new Error("Cannot check leaks: out of memory");
  }
  const i = found.noSize;
  // msMemScope's analyser stops on such a row ("input data may broken").
  throw new MemscopeCsvError(
    `Cannot check leaks: the MALLOC row on line ${rows.line[i]} (ID ${
      rows.id[i]
    }) has no size:N in its Attr; the log may be broken, so no leak is reported from it`,
  );
}

/** Each byte's two lowercase hex digits. */
const HEX_BYTE = Array.from(
  { length: 256 },
  (_, b) => b.toString(16).padStart(2, "0"),
);

/**
 * The Ptrs that are no address, an empty one and N/A, and their keys: in
 * no other key's range, as leak_scan.c keys them (KEY_EMPTY_PTR,
 * KEY_NA_PTR).
 */
const NO_ADDRESS = ["", "N/A"];
const NO_ADDRESS_KEYS = [-0.125, -0.25];

/** `0x` or `0X`, then 16 hex digits or 1 to 13 without a leading zero. */
const HEX_PTR = /^0([xX])([0-9a-fA-F]{16}|0|[1-9a-fA-F][0-9a-fA-F]{0,12})$/;

/**
 * A Ptr's key when written as `HEX_PTR` after `0X` or in capitals (its
 * letters of one case), below 2^50; else NaN (msMemScope's own two
 * spellings are the caller's).
 */
function spelledHexKey(text: string): number {
  const m = HEX_PTR.exec(text);
  if (!m) return NaN;
  const [, x, digits] = m;
  const upper = /[A-F]/.test(digits), lower = /[a-f]/.test(digits);
  const value = parseInt(digits, 16);
  if ((upper && lower) || (x === "x" && !upper) || value >= 2 ** 50) {
    return NaN;
  }
  return value + (digits.length < 16 ? 0.5 : 0) + (x === "X" ? 0.125 : 0) +
    (upper ? 0.25 : 0);
}

/**
 * Ptr keys for the typed arrays. msMemScope's analyser matches a FREE to
 * its blocks by the Ptr text, so two keys are equal exactly when the texts
 * are: a Ptr written as msMemScope writes it (`0x` and 16 lowercase hex
 * digits) is its own value; one in `0x` and up to 13 digits without a
 * leading zero (Python's `hex()`) is value + 0.5; the same two forms after
 * `0X` or in capitals (below 2^50) are value + 1/8 for `0X` and + 1/4 for
 * capitals besides; one in plain decimal (old files) is -(value + 1); an
 * empty one -1/8, N/A -1/4; any other text (other spellings, values past
 * them) gets a key of its own, -(n + 0.5), the same one in every pass over
 * the file. leak_scan.c keys all but the last alike.
 */
export class PtrKeys {
  #texts = new Map<string, number>();

  /**
   * The Ptr as written, for a key made from its value (any spelling but
   * its own text's); undefined for a key of its own text, which only the row has.
   */
  static text(key: number): string | undefined {
    if (Number.isInteger(key) && key >= 0) {
      // A byte at a time from the two 32-bit halves (keys are below 2^53):
      // toString(16) of a number past 2^31 took about 0.7 µs, 7 ms of
      // 10,000 printed leaks.
      const hi = Math.floor(key / 4294967296), lo = key >>> 0;
      return "0x" + HEX_BYTE[hi >>> 24] + HEX_BYTE[(hi >>> 16) & 255] +
        HEX_BYTE[(hi >>> 8) & 255] + HEX_BYTE[hi & 255] +
        HEX_BYTE[lo >>> 24] + HEX_BYTE[(lo >>> 16) & 255] +
        HEX_BYTE[(lo >>> 8) & 255] + HEX_BYTE[lo & 255];
    }
    if (key > 0) {
      // The eighth says the spelling (PtrKeys.of).
      const value = Math.floor(key), eighths = (key - value) * 8;
      const digits = value.toString(16);
      const padded = eighths & 4 ? digits : digits.padStart(16, "0");
      return `0${eighths & 1 ? "X" : "x"}${
        eighths & 2 ? padded.toUpperCase() : padded
      }`;
    }
    const none = NO_ADDRESS_KEYS.indexOf(key);
    if (none >= 0) return NO_ADDRESS[none];
    const dec = -key - 1;
    return Number.isInteger(dec) ? String(dec) : undefined;
  }

  /** The key of a row's Ptr. */
  of(row: MemscopeRow): number {
    const hex = row.ptrHex16;
    if (hex === hex) return hex; // not NaN
    // Below 2^52, so that the half is kept: apart from the 16 digits' keys.
    const short = row.ptrHexShort;
    if (short === short) return short + 0.5;
    const dec = row.ptrDecimal;
    if (dec === dec) return -(dec + 1);
    const text = row.ptrText;
    const none = NO_ADDRESS.indexOf(text);
    if (none >= 0) return NO_ADDRESS_KEYS[none];
    const spelled = spelledHexKey(text);
    if (spelled === spelled) return spelled;
    let k = this.#texts.get(text);
    if (k === undefined) this.#texts.set(text, k = -(this.#texts.size + 0.5));
    return k;
  }
}
