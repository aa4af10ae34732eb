/**
 * A segment's live block addresses in ascending order, as
 * `ffi/analysis/addr_set.c` keeps them: sorted chunks of at most
 * {@link CHUNK_MAX}, found by their last addresses, so that a segment
 * holding tens of thousands of blocks (expandable segments: one per stream
 * holds every block) takes one in or out without moving the rest. One
 * sorted array moved half of it each time: 50,000 live blocks took seconds.
 *
 * @module
 */

/** The most addresses a chunk holds before it is cut in two. */
const CHUNK_MAX = 512;

/** Ascending addresses, none twice. */
export class AddrSet {
  #chunks: number[][] = [];
  #size = 0;

  /** How many addresses it holds. */
  get size(): number {
    return this.#size;
  }

  /** The first chunk whose last address is `v` or more, else the last. */
  #chunkFor(v: number): number {
    let lo = 0, hi = this.#chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const c = this.#chunks[mid];
      if (c[c.length - 1] < v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Adds `v`, which it does not hold. */
  insert(v: number): void {
    this.#size++;
    if (this.#size === 1) {
      this.#chunks = [[v]];
      return;
    }
    const k = this.#chunkFor(v);
    let c = this.#chunks[k];
    if (c.length === CHUNK_MAX) {
      const upper = c.splice(c.length >> 1);
      this.#chunks.splice(k + 1, 0, upper);
      if (v > c[c.length - 1]) c = upper;
    }
    c.splice(lowerBound(c, v), 0, v);
  }

  /** Takes `v` out, where it holds it. */
  delete(v: number): void {
    if (!this.#size) return;
    const k = this.#chunkFor(v);
    const c = this.#chunks[k];
    const i = lowerBound(c, v);
    if (c[i] !== v) return;
    c.splice(i, 1);
    this.#size--;
    if (!c.length) this.#chunks.splice(k, 1);
  }

  /** The addresses that are `v` or less, descending. */
  *downFrom(v: number): Generator<number> {
    if (!this.#size) return;
    let k = this.#chunkFor(v);
    let c = this.#chunks[k];
    let i = lowerBound(c, v);
    if (!(i < c.length && c[i] === v)) i--;
    for (;;) {
      for (; i >= 0; i--) yield c[i];
      if (k === 0) return;
      c = this.#chunks[--k];
      i = c.length - 1;
    }
  }

  /**
   * The last address below `from` (where there is one), then those from
   * `from` up to `to`, ascending: the blocks that may overlap [from, to).
   */
  nearby(from: number, to: number): number[] {
    const out: number[] = [];
    if (!this.#size) return out;
    let k = this.#chunkFor(from);
    let i = lowerBound(this.#chunks[k], from);
    if (i > 0) i--;
    else if (k > 0) i = this.#chunks[--k].length - 1;
    for (; k < this.#chunks.length; k++, i = 0) {
      const c = this.#chunks[k];
      for (; i < c.length; i++) {
        if (c[i] >= to) return out;
        out.push(c[i]);
      }
    }
    return out;
  }

  /** Every address, ascending. */
  *[Symbol.iterator](): Generator<number> {
    for (const c of this.#chunks) yield* c;
  }

  /** Empties it. */
  clear(): void {
    this.#chunks = [];
    this.#size = 0;
  }
}

/** The first index of `list` (ascending) whose value is at least `v`. */
function lowerBound(list: number[], v: number): number {
  let lo = 0, hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
