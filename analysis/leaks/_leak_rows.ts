/**
 * The memory rows check_leaks keeps, in growable typed arrays (about 41
 * bytes a row, no object per row), and the replay that turns the rows of one
 * device's window into leaks.
 *
 * @module
 */
import { MemscopeCsvError, type MemscopeRow } from "../memscope_csv/mod.ts";

const MALLOC = 1, FREE = 2;
export { FREE, MALLOC };

/** MALLOC and FREE rows of one pool, in file order. */
export class LeakRows {
  length = 0;
  id: Float64Array;
  ptr: Float64Array;
  size: Float64Array;
  offset: Float64Array;
  line: Uint32Array;
  device: Uint32Array;
  kind: Uint8Array;

  /**
   * `budget`: most rows it will hold (Infinity: no limit); `expect`: rows
   * to make room for at once (untouched room costs address space only, and
   * growing copies every array).
   */
  constructor(readonly budget: number, expect = 1024) {
    const n = Math.max(1, Math.min(expect, budget));
    this.id = new Float64Array(n);
    this.ptr = new Float64Array(n);
    this.size = new Float64Array(n);
    this.offset = new Float64Array(n);
    this.line = new Uint32Array(n);
    this.device = new Uint32Array(n);
    this.kind = new Uint8Array(n);
  }

  /** Forgets every row, keeping the arrays for the next pass. */
  clear(): void {
    this.length = 0;
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
    if (n === this.id.length) {
      if (n >= this.budget) return false;
      this.#grow(Math.min(n * 2, this.budget));
    }
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

  #grow(cap: number) {
    const f = (a: Float64Array) => {
      const b = new Float64Array(cap);
      b.set(a);
      return b;
    };
    this.id = f(this.id);
    this.ptr = f(this.ptr);
    this.size = f(this.size);
    this.offset = f(this.offset);
    const l = new Uint32Array(cap);
    l.set(this.line);
    this.line = l;
    const d = new Uint32Array(cap);
    d.set(this.device);
    this.device = d;
    const k = new Uint8Array(cap);
    k.set(this.kind);
    this.kind = k;
  }
}

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
 * Sorts row indices by ID, then index (file order). When every ID is a
 * whole number small enough, each (ID, index) pair is packed into one
 * double and the doubles are sorted natively, many times faster than a
 * comparator over a million rows; other IDs take the comparator.
 */
function sortById(picked: Uint32Array, id: Float64Array, rows: number): void {
  const shift = 2 ** Math.ceil(Math.log2(rows + 1));
  const limit = Number.MAX_SAFE_INTEGER / shift;
  const packed = new Float64Array(picked.length);
  for (let k = 0; k < picked.length; k++) {
    const i = picked[k], x = id[i];
    if (!(x >= 0 && x < limit && Math.floor(x) === x)) {
      picked.sort((i, j) => id[i] - id[j] || i - j);
      return;
    }
    packed[k] = x * shift + i;
  }
  packed.sort();
  for (let k = 0; k < picked.length; k++) picked[k] = packed[k] % shift;
}

/**
 * Replays one device's rows in ID order (file order among equal IDs), as
 * msMemScope's analyser does, and returns the indices of the blocks still
 * pending, ordered by ID:
 * - a MALLOC with A <= ID <= B becomes pending; pending blocks are keyed by
 *   ID, so a later MALLOC with the same ID replaces the earlier one;
 * - a FREE with A <= ID <= C clears every pending block at its Ptr.
 *
 * Pending blocks are chained per Ptr in an open-addressing table over typed
 * arrays: a FREE walks only its own Ptr's chain and empties it, so each block
 * is visited once (never a scan of all pending blocks), and nothing is
 * allocated per row.
 */
export function replayWindow(
  rows: LeakRows,
  device: number,
  w: Window,
): number[] {
  const { id, kind, ptr } = rows;
  let picked = new Uint32Array(rows.length), n = 0;
  let sorted = true, prev = -Infinity;
  for (let i = 0; i < rows.length; i++) {
    if (rows.device[i] !== device) continue;
    const x = id[i];
    if (x < w.a || x > (kind[i] === MALLOC ? w.b : w.c)) continue;
    if (kind[i] === MALLOC && Number.isNaN(rows.size[i])) {
      // msMemScope's analyser stops on such a row ("input data may broken").
      throw new MemscopeCsvError(
        `Cannot check leaks: the MALLOC row on line ${
          rows.line[i]
        } (ID ${x}) has no size:N in its Attr; the log may be broken, so no leak is reported from it`,
      );
    }
    if (x < prev) sorted = false;
    prev = x;
    picked[n++] = i;
  }
  picked = picked.subarray(0, n);
  if (!sorted) sortById(picked, id, rows.length);
  // One slot per Ptr; a slot's chain runs head -> next -> ... (-1 ends it).
  let cap = 16;
  while (cap < n * 2) cap *= 2;
  const keys = new Float64Array(cap);
  const used = new Uint8Array(cap);
  const head = new Int32Array(cap).fill(-1);
  // Chains and flags by place in replay order: as long as the window, not
  // the whole file (a device's window is a share of its rows).
  const next = new Int32Array(n);
  const pending = new Uint8Array(n);
  const mask = cap - 1;
  // The last MALLOC seen: equal IDs sit next to each other in this order.
  let lastMalloc = -1;
  for (let k = 0; k < n; k++) {
    const i = picked[k], p = ptr[i];
    let s = mixKey(p) & mask;
    while (used[s] && keys[s] !== p) s = (s + 1) & mask;
    if (kind[i] === MALLOC) {
      if (lastMalloc >= 0 && id[picked[lastMalloc]] === id[i]) {
        pending[lastMalloc] = 0;
      }
      lastMalloc = k;
      if (!used[s]) {
        used[s] = 1;
        keys[s] = p;
      }
      pending[k] = 1;
      next[k] = head[s];
      head[s] = k;
    } else if (used[s]) {
      for (let j = head[s]; j >= 0; j = next[j]) pending[j] = 0;
      head[s] = -1;
    }
  }
  const leaks: number[] = [];
  for (let k = 0; k < n; k++) if (pending[k]) leaks.push(picked[k]);
  return leaks;
}

/**
 * Ptr keys for the typed arrays. msMemScope's analyser matches a FREE to
 * its blocks by the Ptr text, so two keys are equal exactly when the texts
 * are: a Ptr written as msMemScope writes it (`0x` and 16 lowercase hex
 * digits) is its own value; one in plain decimal (old files) is -(value + 1);
 * any other text (N/A, other spellings, values past 2^53) gets a key of its
 * own, -(n + 0.5), the same one in every pass over the file.
 */
export class PtrKeys {
  #texts = new Map<string, number>();

  /** The key of a row's Ptr. */
  of(row: MemscopeRow): number {
    const hex = row.ptrHex16;
    if (hex === hex) return hex; // not NaN
    const dec = row.ptrDecimal;
    if (dec === dec) return -(dec + 1);
    const text = row.ptrText;
    let k = this.#texts.get(text);
    if (k === undefined) this.#texts.set(text, k = -(this.#texts.size + 0.5));
    return k;
  }
}
