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
 * Both searches keep each step to the band of diagonals a path of D edits
 * can use (`band`): a cell outside it is on no shortest path, nor is any
 * cell computed from it, so the cells inside take the same values and the
 * searches end, or meet, where and as they did over every diagonal. D is
 * found first by the same search with a bound grown from |N - M|. Two
 * steps where one has 33k more ops took 8 s over every diagonal, 0.1 s in
 * the band. `ffi/daemon/myers.c` is the same code in C, for the native
 * comparison.
 *
 * Those searches still take about D^2 steps, which no shortest script
 * escapes: two 1.6M-op steps with every 20th op renamed (D = 160,000)
 * took 99 s, and two unrelated ones hours (msMemScope's own O((N+M)D)
 * search no less, and hours already at D = 3,500 on a 1M-op step). Past
 * `exactSteps` steps of the search for D (2^24 by default: D near 3,500,
 * about 60 ms), the script is found piece by piece instead
 * (`piecewiseDiff`): not always a shortest one, nor, of equally short
 * ones, always the one the whole search would pick (each piece's path is
 * traced back from the piece's end, not the whole graph's), but one that
 * keeps every op the steps share where they differ here and there.
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
  /**
   * Steps (cells of the edit graph) the search for D may take before the
   * script is found piece by piece. Default 2^24.
   */
  exactSteps?: number;
}

/** {@linkcode MyersOptions.traceBudgetBytes} when not given: 64 MiB. */
export const DEFAULT_TRACE_BUDGET = 64 * 1024 * 1024;

/** {@linkcode MyersOptions.exactSteps} when not given. */
export const DEFAULT_EXACT_STEPS = 2 ** 24;

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
  const n = a.length, m = b.length;
  const v = new Int32Array(2 * (n + m) + 3);
  // Whole steps, as myers.c counts them; none for NaN or less than 0.
  const steps = options.exactSteps ?? DEFAULT_EXACT_STEPS;
  const d = shortest(a, b, v, { steps: steps >= 0 ? Math.floor(steps) : 0 });
  if (d === TOO_LONG) return piecewiseDiff(a, b);
  // The greedy search's trace holds 2(d+1)(d+2) bytes by its last step.
  if (d === 0 || 2 * (d + 1) * (d + 2) <= budget) return greedyDiff(a, b, d, v);
  const out: Edit[] = [];
  const search = {
    a,
    b,
    out,
    vf: v,
    vb: new Int32Array(v.length),
    off: ((n + m + 1) >> 1) + 1,
  };
  linearDiff(search, { aLo: 0, aHi: n, bLo: 0, bHi: m }, d);
  return out;
}

/**
 * The diagonals of step d, lo to hi every other one, that a path of at
 * most u edits from diagonal 0 to diagonal delta can be on after d edits
 * (|delta - k| <= u - d); lo > hi when there are none. A cell inside has
 * both its predecessors inside, so the band computes itself exactly.
 */
function band(d: number, delta: number, u: number): [number, number] {
  let lo = Math.max(-d, delta - u + d), hi = Math.min(d, delta + u - d);
  if ((lo + d) & 1) lo++;
  if ((hi + d) & 1) hi--;
  return [lo, hi];
}

/** x of the cell (d, k) before its snake, from step d - 1 in v (at off). */
function stepX(v: Int32Array, off: number, d: number, k: number): number {
  return k === -d || (k !== d && v[off + k - 1] < v[off + k + 1])
    ? v[off + k + 1]
    : v[off + k - 1] + 1;
}

/** What a search returns when its steps ran out. */
const TOO_LONG = -2;

/** Steps a search may still take: each cell it computes is one. */
interface Steps {
  steps: number;
}

/**
 * D by the forward greedy search kept to the band of u; -1 when D > u,
 * TOO_LONG when `left` runs out first.
 */
function probe<T>(
  a: ArrayLike<T>,
  b: ArrayLike<T>,
  u: number,
  v: Int32Array,
  left: Steps,
): number {
  const n = a.length, m = b.length, delta = n - m, off = n + m + 1;
  v[off + 1] = 0;
  for (let d = 0; d <= u && d <= n + m; d++) {
    const [lo, hi] = band(d, delta, u);
    if (lo > hi) return -1;
    for (let k = lo; k <= hi; k += 2) {
      if (left.steps-- <= 0) return TOO_LONG;
      let x = stepX(v, off, d, k), y = x - k;
      while (x < n && y < m && a[x] === b[y]) x++, y++;
      v[off + k] = x;
      if (x >= n && y >= m) return d;
    }
  }
  return -1;
}

/** A bound u grown from |delta| (keeping its parity), total at most. */
function grow(u: number, delta: number, total: number): number {
  const extra = u - Math.abs(delta);
  return Math.min(total, Math.abs(delta) + (extra < 2 ? 2 : 2 * extra));
}

/** The number of edits of a shortest script; TOO_LONG past `left`. */
function shortest<T>(
  a: ArrayLike<T>,
  b: ArrayLike<T>,
  v: Int32Array,
  left: Steps,
): number {
  const delta = a.length - b.length, total = a.length + b.length;
  for (let u = Math.abs(delta);; u = grow(u, delta, total)) {
    const d = probe(a, b, u, v, left);
    if (d >= 0 || d === TOO_LONG) return d;
    if (u >= total) {
      throw new Error("Unreachable: the search with u = N + M always ends");
    }
  }
}

/** The greedy forward search of `dMax` steps, then the backtrack. */
function greedyDiff<T>(
  a: ArrayLike<T>,
  b: ArrayLike<T>,
  dMax: number,
  v: Int32Array,
): Edit[] {
  return backtrack(greedyTrace(a, b, dMax, v, dMax), a.length, b.length);
}

/**
 * The greedy forward search of `dMax` steps with one frontier snapshot per
 * step: of its band of `u` (Infinity: every diagonal).
 */
function greedyTrace<T>(
  a: ArrayLike<T>,
  b: ArrayLike<T>,
  dMax: number,
  v: Int32Array,
  u: number,
): Frontier[] {
  const n = a.length, m = b.length, delta = n - m, off = n + m + 1;
  const trace: Frontier[] = [];
  v[off + 1] = 0;
  for (let d = 0; d <= dMax; d++) {
    const [lo, hi] = band(d, delta, u);
    const x = new Int32Array(((hi - lo) >> 1) + 1);
    for (let k = lo, i = 0; k <= hi; k += 2, i++) {
      let xk = stepX(v, off, d, k), y = xk - k;
      while (xk < n && y < m && a[xk] === b[y]) xk++, y++;
      x[i] = v[off + k] = xk;
    }
    trace.push({ lo, x });
  }
  return trace;
}

/**
 * The path of `edits` edits from the start that reaches furthest inside
 * the edit graph (the most ops of both sides; on a tie, the cell nearest
 * diagonal `goal`, then the one with fewer deletes): a piece whose script
 * is longer than that (a run of ops one side adds, past the piece's end
 * on the other side) goes on along it. `goal`: where the whole diff ends,
 * as seen from the piece (the sides' lengths left, one less the other),
 * so that a tie across a run of added ops longer than the piece, where no
 * op matches, is settled as the side that is longer has it.
 */
function furthestPath<T>(
  a: ArrayLike<T>,
  b: ArrayLike<T>,
  edits: number,
  v: Int32Array,
  goal: number,
): Edit[] {
  const n = a.length, m = b.length;
  const trace = greedyTrace(a, b, edits, v, Infinity);
  const { lo, x } = trace[edits];
  let bestX = 0, bestY = 0, found = false;
  for (let i = 0; i < x.length; i++) {
    const k = lo + 2 * i, y = x[i] - k;
    if (x[i] > n || y > m) continue;
    const better = !found || x[i] + y > bestX + bestY ||
      (x[i] + y === bestX + bestY &&
        Math.abs(k - goal) < Math.abs(bestX - bestY - goal));
    if (better) bestX = x[i], bestY = y, found = true;
  }
  return backtrack(trace, bestX, bestY);
}

/** Ops of either side a piece of piecewiseDiff aligns at a time. */
const PIECE = 512;
/** Most edits of a piece's own script: past them, furthestPath's path. */
const PIECE_EDITS = 256;

/**
 * An edit script found piece by piece: the shortest script of the next
 * PIECE ops of each side, kept up to where it has taken half of either
 * (its end is only where the piece was cut), then the next piece from
 * there; the last piece's whole. A piece with more than PIECE_EDITS edits
 * goes on along the path of that many that reaches furthest (furthestPath).
 * Each piece costs about PIECE_EDITS^2 steps at most and moves on by at
 * least PIECE_EDITS ops of the two sides.
 */
function piecewiseDiff<T>(a: ArrayLike<T>, b: ArrayLike<T>): Edit[] {
  const n = a.length, m = b.length, out: Edit[] = [];
  const v = new Int32Array(4 * PIECE + 3);
  const unlimited = { steps: Infinity };
  const piece = (s: ArrayLike<T>, from: number, to: number) =>
    Array.from({ length: to - from }, (_, i) => s[from + i]);
  for (let x = 0, y = 0; x < n || y < m;) {
    const pa = piece(a, x, Math.min(n, x + PIECE));
    const pb = piece(b, y, Math.min(m, y + PIECE));
    const last = x + pa.length === n && y + pb.length === m;
    const d = probe(pa, pb, PIECE_EDITS, v, unlimited);
    const whole = d >= 0;
    const path = whole
      ? greedyDiff(pa, pb, d, v)
      : furthestPath(pa, pb, PIECE_EDITS, v, n - x - (m - y));
    let ta = 0, tb = 0;
    for (const e of path) {
      if (e.kind === "equal") {
        out.push({ kind: "equal", a: x + ta++, b: y + tb++ });
      } else if (e.kind === "delete") out.push({ kind: "delete", a: x + ta++ });
      else out.push({ kind: "insert", b: y + tb++ });
      if (whole && !last && (ta >= PIECE / 2 || tb >= PIECE / 2)) break;
    }
    x += ta, y += tb;
  }
  return out;
}

/** The x of a step's cells in its band, from diagonal lo on. */
interface Frontier {
  lo: number;
  x: Int32Array;
}

/** x reached on diagonal k at step d, read back from its snapshot. */
function frontier(trace: Frontier[], d: number, k: number): number {
  return trace[d].x[(k - trace[d].lo) >> 1];
}

/** The path of the trace's last step that ends at (x, y), from the start. */
function backtrack(trace: Frontier[], endX: number, endY: number): Edit[] {
  const out: Edit[] = [];
  let x = endX;
  let y = endY;
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

/** Both sequences, the script being written, and the frontiers. */
interface Search<T> {
  a: ArrayLike<T>;
  b: ArrayLike<T>;
  out: Edit[];
  vf: Int32Array;
  vb: Int32Array;
  /** Where diagonal 0 sits in vf and vb. */
  off: number;
}

/** The part a[aLo, aHi) x b[bLo, bHi) of the edit graph. */
interface Box {
  aLo: number;
  aHi: number;
  bLo: number;
  bHi: number;
}

/** A middle snake (x, y) -> (u, w) and the edits each side of it. */
interface Snake {
  x: number;
  y: number;
  u: number;
  w: number;
  left: number;
  right: number;
}

/** Linear-space diff of one box of about u edits, appended to the script. */
function linearDiff<T>(search: Search<T>, box: Box, u: number): void {
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
    const inner = { aLo, aHi: aEnd, bLo, bHi: bEnd };
    const n = aEnd - aLo, m = bEnd - bLo;
    // u is D when the halves' counts hold; grown when they do not.
    let s = middleSnake(search, inner, u);
    while (s === undefined) {
      if (u >= n + m) {
        throw new Error("Unreachable: the searches must meet within N + M");
      }
      u = grow(Math.max(u, Math.abs(n - m)), n - m, n + m);
      s = middleSnake(search, inner, u);
    }
    linearDiff(search, { aLo, aHi: aLo + s.x, bLo, bHi: bLo + s.y }, s.left);
    for (let i = s.x, j = s.y; i < s.u; i++, j++) {
      out.push({ kind: "equal", a: aLo + i, b: bLo + j });
    }
    linearDiff(
      search,
      { aLo: aLo + s.u, aHi: aEnd, bLo: bLo + s.w, bHi: bEnd },
      s.right,
    );
  }
  for (let i = aEnd, j = bEnd; i < aHi; i++, j++) {
    out.push({ kind: "equal", a: i, b: j });
  }
}

/**
 * The middle snake of an optimal path through the box, as offsets of its
 * start and end from the box's corner, with the edits before and after
 * it; undefined when the box takes more than u edits.
 */
function middleSnake<T>(
  search: Search<T>,
  box: Box,
  u: number,
): Snake | undefined {
  const { a, b, vf, vb, off } = search;
  const { aLo, aHi, bLo, bHi } = box;
  const n = aHi - aLo;
  const m = bHi - bLo;
  const delta = n - m;
  const odd = (delta & 1) !== 0;
  u = Math.max(u, Math.abs(delta));
  if ((u - delta) & 1) u++;
  const last = Math.min((u + 1) >> 1, Math.ceil((n + m) / 2));
  // vf[k]: furthest x forward on diagonal k; vb[k]: furthest distance from
  // the end backward on reversed diagonal k (forward diagonal delta - k).
  vf[off + 1] = 0;
  vb[off + 1] = 0;
  for (let d = 0; d <= last; d++) {
    const [lo, hi] = band(d, delta, u);
    if (lo > hi) return undefined;
    for (let k = lo; k <= hi; k += 2) {
      let x = stepX(vf, off, d, k), y = x - k;
      const x0 = x, y0 = y;
      while (x < n && y < m && a[aLo + x] === b[bLo + y]) x++, y++;
      vf[off + k] = x;
      // The backward cell read must be one of the band's, written at d-1.
      const kb = delta - k;
      if (
        odd && kb >= -(d - 1) && kb <= d - 1 && d - 1 + Math.abs(k) <= u &&
        x + vb[off + kb] >= n
      ) {
        return { x: x0, y: y0, u: x, w: y, left: d, right: d - 1 };
      }
    }
    for (let k = lo; k <= hi; k += 2) {
      let x = stepX(vb, off, d, k), y = x - k;
      const x0 = x, y0 = y;
      while (x < n && y < m && a[aHi - 1 - x] === b[bHi - 1 - y]) x++, y++;
      vb[off + k] = x;
      const kf = delta - k;
      if (
        !odd && kf >= -d && kf <= d && d + Math.abs(k) <= u &&
        x + vf[off + kf] >= n
      ) {
        return { x: n - x, y: m - y, u: n - x0, w: m - y0, left: d, right: d };
      }
    }
  }
  return undefined;
}
