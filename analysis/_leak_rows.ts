/**
 * The memory rows check_leaks keeps, in growable typed arrays (about 41
 * bytes a row, no object per row), and the replay that turns the rows of one
 * device's window into leaks.
 *
 * @module
 */

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
  device: Uint16Array;
  kind: Uint8Array;

  /** `budget`: most rows it will hold (Infinity: no limit). */
  constructor(readonly budget: number) {
    const n = Math.max(1, Math.min(1024, budget));
    this.id = new Float64Array(n);
    this.ptr = new Float64Array(n);
    this.size = new Float64Array(n);
    this.offset = new Float64Array(n);
    this.line = new Uint32Array(n);
    this.device = new Uint16Array(n);
    this.kind = new Uint8Array(n);
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
    const d = new Uint16Array(cap);
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

/**
 * Replays one device's rows in ID order (file order among equal IDs) and
 * returns the indices of the blocks still pending, ordered by ID: a MALLOC
 * with A <= ID <= B becomes pending, a FREE with A <= ID <= C removes the
 * oldest pending block at its Ptr. Pending blocks sit in a Map keyed by Ptr,
 * so a FREE costs O(1), never a scan.
 */
export function replayWindow(
  rows: LeakRows,
  device: number,
  w: Window,
): number[] {
  const { id, kind } = rows;
  const picked: number[] = [];
  let sorted = true, prev = -Infinity;
  for (let i = 0; i < rows.length; i++) {
    if (rows.device[i] !== device) continue;
    const x = id[i];
    if (x < w.a || x > (kind[i] === MALLOC ? w.b : w.c)) continue;
    if (x < prev) sorted = false;
    prev = x;
    picked.push(i);
  }
  if (!sorted) picked.sort((i, j) => id[i] - id[j] || i - j);
  const head = new Map<number, number>();
  const next = new Map<number, number>();
  for (const i of picked) {
    const p = rows.ptr[i];
    const h = head.get(p);
    if (kind[i] === MALLOC) {
      if (h === undefined) {
        head.set(p, i);
        continue;
      }
      // The same Ptr twice without a free between: queue the newer one.
      let t = h;
      for (let n = next.get(t); n !== undefined; n = next.get(t)) t = n;
      next.set(t, i);
    } else if (h !== undefined) {
      const n = next.get(h);
      if (n === undefined) head.delete(p);
      else {
        head.set(p, n);
        next.delete(h);
      }
    }
  }
  const leaks: number[] = [];
  for (const h of head.values()) {
    for (let i: number | undefined = h; i !== undefined; i = next.get(i)) {
      leaks.push(i);
    }
  }
  return leaks.sort((i, j) => id[i] - id[j] || i - j);
}
