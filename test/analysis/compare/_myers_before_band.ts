// The diff as it was before its searches kept to a band of diagonals
// (analysis/compare/myers_diff.ts at 04f36e4), unchanged: the oracle
// myers_diff_test.ts holds the banded diff and ffi/daemon/myers.c to.
/**
 * Myers' O((N+M)D) shortest edit script between two sequences, the diff that
 * `compare` aligns two steps' op names with.
 *
 * The greedy forward search keeps one snapshot of the frontier per edit, so
 * its path (and with it which of several equally short scripts comes out) is
 * the one msMemScope's compare picks. Those snapshots grow as D²/2, so when D
 * would pass a memory budget the diff switches to the linear-space
 * divide-and-conquer form of the same algorithm (Myers 1986, section 4b):
 * still a shortest script, O(N+M) memory, though possibly aligned
 * differently where equally short scripts exist.
 *
 * @module
 */

/** One step of an edit script: keep, drop from `a`, or add from `b`. */
export type Edit =
  | { kind: "equal"; a: number; b: number }
  | { kind: "delete"; a: number }
  | { kind: "insert"; b: number };

/** Options of {@linkcode myersDiff}. */
export interface MyersOptions {
  /**
   * Bytes the greedy search may spend on frontier snapshots before the diff
   * switches to linear space. Default 64 MiB (about D = 5,800 edits).
   */
  traceBudgetBytes?: number;
}

const DEFAULT_TRACE_BUDGET = 64 * 1024 * 1024;

/**
 * The shortest edit script turning `a` into `b`, elements compared with
 * `===`, in forward order.
 *
 * @example
 * ```ts
 * import { myersDiff } from "./myers_diff.ts";
 * myersDiff(["t", "mm", "sum"], ["t", "randn", "mm"]);
 * // [{ kind: "equal", a: 0, b: 0 }, { kind: "insert", b: 1 },
 * //  { kind: "equal", a: 1, b: 2 }, { kind: "delete", a: 2 }]
 * ```
 */
export function myersDiff<T>(
  a: ArrayLike<T>,
  b: ArrayLike<T>,
  options: MyersOptions = {},
): Edit[] {
  const budget = options.traceBudgetBytes ?? DEFAULT_TRACE_BUDGET;
  const greedy = greedyDiff(a, b, budget);
  if (greedy) return greedy;
  const out: Edit[] = [];
  linearDiff({ a, b, out }, { aLo: 0, aHi: a.length, bLo: 0, bHi: b.length });
  return out;
}

/**
 * Forward greedy search with one frontier snapshot per d; null when the
 * snapshots would outgrow `budget` bytes.
 */
function greedyDiff<T>(
  a: ArrayLike<T>,
  b: ArrayLike<T>,
  budget: number,
): Edit[] | null {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // Frontier of step d (diagonals -d, -d+2, ..., d) lives at trace[d].
  const trace: Int32Array[] = [];
  let spent = 0;
  for (let d = 0; d <= max; d++) {
    spent += 4 * (d + 1);
    if (spent > budget && d > 0) return null;
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1])
        ? v[offset + k + 1]
        : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        trace.push(snapshot(v, offset, d));
        return backtrack(trace, n, m);
      }
    }
    trace.push(snapshot(v, offset, d));
  }
  throw new Error("Unreachable: the greedy search always reaches (N, M)");
}

function snapshot(v: Int32Array, offset: number, d: number): Int32Array {
  const s = new Int32Array(d + 1);
  for (let i = 0, k = -d; k <= d; i++, k += 2) s[i] = v[offset + k];
  return s;
}

/** x reached on diagonal k at step d, read back from its snapshot. */
function frontier(trace: Int32Array[], d: number, k: number): number {
  return trace[d][(k + d) >> 1];
}

function backtrack(trace: Int32Array[], n: number, m: number): Edit[] {
  const out: Edit[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d > 0; d--) {
    const k = x - y;
    const down = k === -d ||
      (k !== d && frontier(trace, d - 1, k - 1) <
          frontier(trace, d - 1, k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = frontier(trace, d - 1, prevK);
    const prevY = prevX - prevK;
    // The snake after the edit, then the edit itself.
    const startX = down ? prevX : prevX + 1;
    while (x > startX) out.push({ kind: "equal", a: --x, b: --y });
    if (down) out.push({ kind: "insert", b: --y });
    else out.push({ kind: "delete", a: --x });
    if (x !== prevX || y !== prevY) {
      throw new Error("Unreachable: backtrack left the greedy path");
    }
  }
  while (x > 0) out.push({ kind: "equal", a: --x, b: --y });
  return out.reverse();
}

/** Both sequences and the script being written. */
interface Search<T> {
  a: ArrayLike<T>;
  b: ArrayLike<T>;
  out: Edit[];
}

/** The part a[aLo, aHi) x b[bLo, bHi) of the edit graph. */
interface Box {
  aLo: number;
  aHi: number;
  bLo: number;
  bHi: number;
}

/** Linear-space diff of one box, appended to the script. */
function linearDiff<T>(search: Search<T>, box: Box): void {
  const { a, b, out } = search;
  let { aLo, bLo } = box;
  const { aHi, bHi } = box;
  // Common prefix and suffix need no search; trimming them also guarantees
  // that every middle snake below splits the problem into smaller parts.
  while (aLo < aHi && bLo < bHi && a[aLo] === b[bLo]) {
    out.push({ kind: "equal", a: aLo++, b: bLo++ });
  }
  let aEnd = aHi;
  let bEnd = bHi;
  while (aEnd > aLo && bEnd > bLo && a[aEnd - 1] === b[bEnd - 1]) {
    aEnd--;
    bEnd--;
  }
  if (aLo === aEnd) {
    for (let j = bLo; j < bEnd; j++) out.push({ kind: "insert", b: j });
  } else if (bLo === bEnd) {
    for (let i = aLo; i < aEnd; i++) out.push({ kind: "delete", a: i });
  } else {
    const [x, y, u, w] = middleSnake(search, {
      aLo,
      aHi: aEnd,
      bLo,
      bHi: bEnd,
    });
    linearDiff(search, { aLo, aHi: aLo + x, bLo, bHi: bLo + y });
    for (let i = x, j = y; i < u; i++, j++) {
      out.push({ kind: "equal", a: aLo + i, b: bLo + j });
    }
    linearDiff(search, { aLo: aLo + u, aHi: aEnd, bLo: bLo + w, bHi: bEnd });
  }
  for (let i = aEnd, j = bEnd; i < aHi; i++, j++) {
    out.push({ kind: "equal", a: i, b: j });
  }
}

/**
 * The middle snake of an optimal path through the box, as [x, y, u, v]
 * offsets of its start and end from the box's corner.
 */
function middleSnake<T>(
  search: Search<T>,
  box: Box,
): [number, number, number, number] {
  const { a, b } = search;
  const { aLo, aHi, bLo, bHi } = box;
  const n = aHi - aLo;
  const m = bHi - bLo;
  const delta = n - m;
  const odd = (delta & 1) !== 0;
  const half = Math.ceil((n + m) / 2);
  const offset = half + 1;
  // vf[k]: furthest x forward on diagonal k; vb[k]: furthest distance from
  // the end backward on reversed diagonal k (forward diagonal delta - k).
  const vf = new Int32Array(2 * half + 3);
  const vb = new Int32Array(2 * half + 3);
  for (let d = 0; d <= half; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && vf[offset + k - 1] < vf[offset + k + 1])
        ? vf[offset + k + 1]
        : vf[offset + k - 1] + 1;
      let y = x - k;
      const x0 = x;
      const y0 = y;
      while (x < n && y < m && a[aLo + x] === b[bLo + y]) {
        x++;
        y++;
      }
      vf[offset + k] = x;
      const kb = delta - k;
      if (odd && kb >= -(d - 1) && kb <= d - 1 && x + vb[offset + kb] >= n) {
        return [x0, y0, x, y];
      }
    }
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && vb[offset + k - 1] < vb[offset + k + 1])
        ? vb[offset + k + 1]
        : vb[offset + k - 1] + 1;
      let y = x - k;
      const x0 = x;
      const y0 = y;
      while (x < n && y < m && a[aHi - 1 - x] === b[bHi - 1 - y]) {
        x++;
        y++;
      }
      vb[offset + k] = x;
      const kf = delta - k;
      if (!odd && kf >= -d && kf <= d && x + vf[offset + kf] >= n) {
        return [n - x, m - y, n - x0, m - y0];
      }
    }
  }
  throw new Error("Unreachable: the forward and backward searches must meet");
}
