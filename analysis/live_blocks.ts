/**
 * The live blocks of one process, keyed by address, in typed arrays.
 *
 * The daemon updates this table on every allocation and free it reads from
 * the ring, millions a second. Device addresses lie above 2^32, so as keys
 * of a `Map` every one is a heap number: hashing them and allocating an
 * entry object per block cost more than everything else the pump does. Here
 * a block is a row of columns (no object), and the index is an open-address
 * table of row numbers with linear probing and backward-shift deletion.
 *
 * @module
 */
import { type Pool, POOLS } from "./events.ts";

/** A live block, as read out of the table (cold paths only). */
export interface LiveBlock {
  addr: number;
  size: number;
  device: number;
  pool: Pool;
  /** Per process, from 1, in allocation order. */
  allocationId: number;
  /** Step it was allocated in. */
  step: number;
  /** Op launches of the process before its allocation. */
  kernel: number;
  ts: number;
}

/**
 * Runtime calls in the order of {@linkcode LiveBlocks.call}'s codes (the
 * ALLOC record's id, `enum sw_alloc_call` in ffi/include/stompwatch_ring.h).
 */
export const ALLOC_CALLS: readonly string[] = [
  "aclrtMalloc",
  "aclrtMallocAlign32",
  "aclrtMallocCached",
];

const EMPTY = -1;
const TWO_32 = 4294967296;

/**
 * Live blocks by address.
 *
 * @example
 * ```ts
 * import { LiveBlocks } from "./live_blocks.ts";
 * const live = new LiveBlocks();
 * const row = live.insert(0x12c0000000, 4096);
 * live.device[row] = 0;
 * live.find(0x12c0000000) === row; // true
 * live.take(0x12c0000000) === row; // true
 * live.count; // 0
 * ```
 */
export class LiveBlocks {
  /** Blocks live now. */
  count = 0;
  /** Their bytes. */
  bytes = 0;
  // Columns, one row per block; rows of freed blocks are reused.
  addr = new Float64Array(0);
  size = new Float64Array(0);
  device = new Int32Array(0);
  /** Index into {@linkcode POOLS}. */
  pool = new Uint8Array(0);
  allocationId = new Float64Array(0);
  step = new Int32Array(0);
  kernel = new Float64Array(0);
  ts = new Float64Array(0);
  /** The name id of the op launched last before the block (-1: none); its owner fills it. */
  op = new Int32Array(0);
  /** Index into {@linkcode ALLOC_CALLS}; its owner fills it. */
  call = new Uint8Array(0);
  /** The row the last {@linkcode insert} filled, so its owner can add columns without a second lookup. */
  lastRow = EMPTY;
  #used = new Uint8Array(0);
  #freeRows = new Int32Array(0);
  #freeTop = 0;
  #rows = 0;
  /** Row numbers by hash; EMPTY where none. */
  #index = new Int32Array(16).fill(EMPTY);
  #shift = 32 - 4;

  // Fibonacci hashing of both halves: block addresses share their low bits.
  #slot(addr: number): number {
    const lo = addr >>> 0, hi = (addr / TWO_32) >>> 0;
    return Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>>
      this.#shift;
  }

  // The index slot that holds addr's row, or the empty slot that ends its
  // probe run (where addr belongs).
  #probe(addr: number): number {
    const index = this.#index, mask = index.length - 1;
    let s = this.#slot(addr);
    for (let row = index[s]; row !== EMPTY; row = index[s]) {
      if (this.addr[row] === addr) return s;
      s = (s + 1) & mask;
    }
    return s;
  }

  /** The row of the block at `addr`, or -1. */
  find(addr: number): number {
    return this.#index[this.#probe(addr)];
  }

  /**
   * Adds a block of `size` bytes at `addr` and returns its row; the caller
   * fills the other columns. A block already at `addr` (its free was never
   * seen) is replaced.
   */
  insert(addr: number, size: number): number {
    if ((this.count + 1) * 2 > this.#index.length) this.#rehash();
    const s = this.#probe(addr);
    let row = this.#index[s];
    if (row !== EMPTY) {
      this.bytes += size - this.size[row];
      this.size[row] = size;
      return this.lastRow = row;
    }
    row = this.#freeTop > 0 ? this.#freeRows[--this.#freeTop] : this.#newRow();
    this.#index[s] = row;
    this.addr[row] = addr;
    this.size[row] = size;
    this.#used[row] = 1;
    this.count++;
    this.bytes += size;
    return this.lastRow = row;
  }

  /**
   * Removes the block at `addr` and returns its row, or -1 when there is
   * none. The row's columns stay readable until the next
   * {@linkcode insert}.
   */
  take(addr: number): number {
    const index = this.#index, mask = index.length - 1;
    let s = this.#probe(addr);
    const row = index[s];
    if (row === EMPTY) return EMPTY;
    // Backward shift: pull later entries of the probe run into the hole, so
    // lookups never need tombstones.
    for (let next = (s + 1) & mask;; next = (next + 1) & mask) {
      const r = index[next];
      if (r === EMPTY) break;
      const home = this.#slot(this.addr[r]);
      // Move r into the hole unless its home lies cyclically in (s, next].
      if (((next - home) & mask) >= ((next - s) & mask)) {
        index[s] = r;
        s = next;
      }
    }
    index[s] = EMPTY;
    this.#used[row] = 0;
    this.#freeRows[this.#freeTop++] = row;
    this.count--;
    this.bytes -= this.size[row];
    return row;
  }

  /** Rows of every live block, in no particular order. */
  *rows(): Generator<number> {
    for (let row = 0; row < this.#rows; row++) {
      if (this.#used[row]) yield row;
    }
  }

  /**
   * Up to `limit` rows of live blocks that `accept` takes, newest (highest
   * allocationId) first. A bounded heap: O(n log limit), whatever the count.
   */
  newest(limit: number, accept: (row: number) => boolean): number[] {
    const heap: number[] = []; // min-heap of rows by allocationId
    const id = this.allocationId;
    const less = (a: number, b: number) => id[heap[a]] < id[heap[b]];
    const swap = (a: number, b: number) => {
      const t = heap[a];
      heap[a] = heap[b];
      heap[b] = t;
    };
    const down = (i: number) => {
      for (;;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < heap.length && less(l, m)) m = l;
        if (r < heap.length && less(r, m)) m = r;
        if (m === i) return;
        swap(i, m);
        i = m;
      }
    };
    for (let row = 0; row < this.#rows && limit > 0; row++) {
      if (!this.#used[row] || !accept(row)) continue;
      if (heap.length < limit) {
        heap.push(row);
        for (let i = heap.length - 1; i > 0;) {
          const parent = (i - 1) >> 1;
          if (!less(i, parent)) break;
          swap(i, parent);
          i = parent;
        }
      } else if (id[row] > id[heap[0]]) {
        heap[0] = row;
        down(0);
      }
    }
    return heap.sort((a, b) => id[b] - id[a]);
  }

  /** The block in `row` as an object. */
  block(row: number): LiveBlock {
    return {
      addr: this.addr[row],
      size: this.size[row],
      device: this.device[row],
      pool: POOLS[this.pool[row]],
      allocationId: this.allocationId[row],
      step: this.step[row],
      kernel: this.kernel[row],
      ts: this.ts[row],
    };
  }

  #newRow(): number {
    if (this.#rows === this.addr.length) this.#growColumns();
    return this.#rows++;
  }

  #growColumns(): void {
    const n = Math.max(64, this.addr.length * 2);
    const grow = <T extends Float64Array | Int32Array | Uint8Array>(
      old: T,
      make: (n: number) => T,
    ): T => {
      const bigger = make(n);
      bigger.set(old);
      return bigger;
    };
    this.addr = grow(this.addr, (n) => new Float64Array(n));
    this.size = grow(this.size, (n) => new Float64Array(n));
    this.device = grow(this.device, (n) => new Int32Array(n));
    this.pool = grow(this.pool, (n) => new Uint8Array(n));
    this.allocationId = grow(this.allocationId, (n) => new Float64Array(n));
    this.step = grow(this.step, (n) => new Int32Array(n));
    this.kernel = grow(this.kernel, (n) => new Float64Array(n));
    this.ts = grow(this.ts, (n) => new Float64Array(n));
    this.op = grow(this.op, (n) => new Int32Array(n));
    this.call = grow(this.call, (n) => new Uint8Array(n));
    this.#used = grow(this.#used, (n) => new Uint8Array(n));
    this.#freeRows = grow(this.#freeRows, (n) => new Int32Array(n));
  }

  #rehash(): void {
    const size = this.#index.length * 2;
    this.#index = new Int32Array(size).fill(EMPTY);
    this.#shift = 32 - Math.log2(size);
    const index = this.#index, mask = size - 1;
    for (let row = 0; row < this.#rows; row++) {
      if (!this.#used[row]) continue;
      let s = this.#slot(this.addr[row]);
      while (index[s] !== EMPTY) s = (s + 1) & mask;
      index[s] = row;
    }
  }
}
