/*
 * myers.c: compare's edit script, the very script of
 * analysis/compare/myers_diff.ts (the greedy search's while its trace fits
 * the budget, else the linear-space one), without visiting every diagonal.
 *
 * Both searches spend D^2 steps on diagonals no shortest path can use:
 * with a bound u >= D, a cell (d, k) whose goal diagonal is further than
 * u - d edits away is on no path of u edits, nor is any cell computed
 * from it, so keeping each step to the diagonals within that band
 * computes the same values on the cells that matter, and finds the same
 * first meeting or end in the same order. The bound is D itself: found
 * once by the same search with a bound that grows until it reaches the end
 * (|N - M| first, which a script of inserts only, or deletes only, meets
 * at once), and for the halves of a middle snake, the edits each side of
 * it. A log with N - M = 33k inserted ops took 8 s; the band makes it
 * linear there. Past `exact_steps` steps of the search for D, the script
 * is found piece by piece, as myers_diff.ts piecewiseDiff finds it.
 */
#include "myers.h"

#include <stdlib.h>
#include <string.h>

#include "myers_step.h"
#include "sw_common.h"

typedef int64_t i64;

static i64 absolute(i64 v) { return v < 0 ? -v : v; }

static bool push(struct sw_edits *e, uint8_t kind, i64 a, i64 b) {
  if (e->n == e->cap) {
    size_t cap = e->cap ? 2 * e->cap : 4096;
    uint8_t *kinds = realloc(e->kind, cap);
    if (kinds) e->kind = kinds;
    uint32_t *as = realloc(e->a, cap * sizeof *as);
    if (as) e->a = as;
    uint32_t *bs = realloc(e->b, cap * sizeof *bs);
    if (bs) e->b = bs;
    if (!kinds || !as || !bs) return false;
    e->cap = cap;
  }
  e->kind[e->n] = kind;
  e->a[e->n] = (uint32_t)a;
  e->b[e->n] = (uint32_t)b;
  e->n++;
  return true;
}

void sw_edits_free(struct sw_edits *e) {
  free(e->kind);
  free(e->a);
  free(e->b);
  *e = (struct sw_edits){0};
}

/*
 * The diagonals of step d, [*lo, *hi] every other one, that a path of at
 * most u edits from diagonal 0 to diagonal delta can be on after d edits:
 * |delta - k| <= u - d. False when there are none. A cell inside has
 * both its predecessors inside, so the band computes itself exactly.
 */
static bool band(i64 d, i64 delta, i64 u, i64 *lo, i64 *hi) {
  i64 l = -d > delta - u + d ? -d : delta - u + d;
  i64 h = d < delta + u - d ? d : delta + u - d;
  if ((l + d) & 1) l++;
  if ((h + d) & 1) h--;
  *lo = l;
  *hi = h;
  return l <= h;
}

/* x of the cell (d, k) before its snake, from step d - 1 in v (at off). */
static inline i64 step_x(const int32_t *v, i64 off, i64 d, i64 k) {
  return k == -d || (k != d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
}

/* What a search returns when its steps ran out. */
#define TOO_LONG (-2)

/* D by the forward greedy search kept to the band of u; -1 when D > u,
 * TOO_LONG when the steps `left` (a cell each; NULL: no end) run out
 * first. v: 2(n + m) + 3 entries. */
static i64 probe(const int32_t *a, i64 n, const int32_t *b, i64 m, i64 u, int32_t *v, uint64_t *left) {
  i64 delta = n - m, off = n + m + 1;
  v[off + 1] = 0;
  for (i64 d = 0; d <= u && d <= n + m; d++) {
    i64 lo, hi;
    if (!band(d, delta, u, &lo, &hi)) return -1;
    /* The steps run out at a cell of this step: the cells before it are
     * searched, as one at a time, for one that reaches the end. */
    const uint64_t cells = (uint64_t)((hi - lo) / 2 + 1);
    if (left && *left < cells) {
      return *left && sw_myers_step(a, n, b, m, v, off, d, lo, lo + 2 * (i64)(*left - 1), NULL) >= 0 ? d : TOO_LONG;
    }
    if (left) *left -= cells;
    if (sw_myers_step(a, n, b, m, v, off, d, lo, hi, NULL) >= 0) return d;
  }
  return -1;
}

/* A bound u grown from |n - m| (keeping its parity) to n + m at most. */
static i64 grow(i64 u, i64 delta, i64 total) {
  i64 extra = u - absolute(delta);
  u = absolute(delta) + (extra < 2 ? 2 : 2 * extra);
  return u > total ? total : u;
}

/* The cells a probe kept to the band of u computes when D > u: every cell
 * of each step's band, up to the first step with none, whatever the
 * values (no cell reaches the end). */
static uint64_t failing_cells(i64 n, i64 m, i64 u) {
  uint64_t cells = 0;
  for (i64 d = 0; d <= u && d <= n + m; d++) {
    i64 lo, hi;
    if (!band(d, n - m, u, &lo, &hi)) break;
    cells += (uint64_t)((hi - lo) / 2 + 1);
  }
  return cells;
}

/* A bound D is never below: of each value, the surplus of one side over
 * the other is deleted or inserted, whatever the script. 0 when memory is
 * short (no bound). */
static i64 surplus(const int32_t *a, i64 n, const int32_t *b, i64 m) {
  unsigned bits = 4;
  while (((uint64_t)1 << bits) < (uint64_t)(n + m) + (uint64_t)(n + m) / 2) bits++;
  const uint64_t cap = (uint64_t)1 << bits;
  struct count {
    int32_t value, diff;
  } *t = malloc(cap * sizeof *t);
  uint8_t *used = calloc(cap, 1);
  i64 total = 0;
  if (t && used) {
    for (i64 i = 0; i < n + m; i++) {
      int32_t value = i < n ? a[i] : b[i - n];
      uint64_t at = ((uint32_t)value * 0x9E3779B97F4A7C15ull) >> (64 - bits);
      while (used[at] && t[at].value != value) at = (at + 1) & (cap - 1);
      if (!used[at]) used[at] = 1, t[at] = (struct count){value, 0};
      t[at].diff += i < n ? 1 : -1;
    }
    for (uint64_t at = 0; at < cap; at++)
      if (used[at]) total += absolute(t[at].diff);
  }
  free(t);
  free(used);
  return total;
}

/* The number of edits of a shortest script; TOO_LONG past `left` steps.
 * A probe with u below D fails after the same cells whatever the values,
 * so those of u below a bound on D (surplus) are counted, not run: two
 * steps of 300,000 ops with every 20th renamed (D = 30,000) spent 2^24
 * cells, 160 ms, in probes that could only fail before the script was
 * found piece by piece. The bound costs a pass over both sides and a
 * table of them: worked out only once a probe would take more cells
 * than that (steps a few edits apart end long before). myers_diff.ts
 * runs every probe: its steps, and its script, are the same. */
static i64 shortest(const int32_t *a, i64 n, const int32_t *b, i64 m, int32_t *v, uint64_t left) {
  i64 floor = -1;
  for (i64 u = absolute(n - m);; u = grow(u, n - m, n + m)) {
    const uint64_t cells = failing_cells(n, m, u);
    if (floor < 0 && cells > (uint64_t)(n + m)) floor = surplus(a, n, b, m);
    if (u < floor && u < n + m) {
      if (cells > left) return TOO_LONG;
      left -= cells;
      continue;
    }
    i64 d = probe(a, n, b, m, u, v, &left);
    if (d >= 0 || d == TOO_LONG || u >= n + m) return d;
  }
}

/* The greedy search's frontier at each step: the cells of its band, from
 * diagonal lo[d], at x[start[d]] on (myers_diff.ts greedyTrace). */
struct trace {
  i64 *lo, *start;
  int32_t *x;
  i64 steps;
};

static void trace_free(struct trace *t) {
  free(t->lo);
  free(t->start);
  free(t->x);
}

/* Room in `t` for the frontiers of steps 0 .. d_max kept to the band of
 * u; false when memory is short. */
static bool trace_room(struct trace *t, i64 n, i64 m, i64 d_max, i64 u) {
  size_t cells = 0;
  for (i64 d = 0; d <= d_max; d++) {
    i64 l, h;
    band(d, n - m, u, &l, &h);
    cells += (size_t)((h - l) / 2 + 1);
  }
  *t = (struct trace){.lo = malloc((size_t)(d_max + 1) * sizeof *t->lo),
                      .start = malloc((size_t)(d_max + 1) * sizeof *t->start),
                      .x = malloc(cells * sizeof *t->x)};
  return t->lo && t->start && t->x;
}

/* The greedy search kept to the band of u (myers_diff.ts greedyTrace),
 * each step's frontier kept in `t` (trace_room's for d_max steps or
 * more), until a cell reaches the end: that step, D; -1 when none has
 * after `d_max` steps. */
static i64 trace_of(const int32_t *a, i64 n, const int32_t *b, i64 m, i64 d_max, i64 u, int32_t *v,
                    struct trace *t) {
  i64 delta = n - m, off = n + m + 1;
  size_t at = 0;
  v[off + 1] = 0;
  for (i64 d = 0; d <= d_max; d++) {
    i64 l, h;
    band(d, delta, u, &l, &h);
    t->lo[d] = l;
    t->start[d] = (i64)at;
    t->steps = d + 1;
    if (sw_myers_step(a, n, b, m, v, off, d, l, h, t->x + at) >= 0) return d;
    at += (size_t)((h - l) / 2 + 1);
  }
  return -1;
}

/* x reached on diagonal k at step d. */
static i64 frontier(const struct trace *t, i64 d, i64 k) { return t->x[t->start[d] + (k - t->lo[d]) / 2]; }

/* myers_diff.ts backtrack: the path of the trace's last step that ends at
 * (x, y), from the start, appended to `out`. */
static bool backtrack(const struct trace *t, i64 x, i64 y, struct sw_edits *out) {
  size_t first = out->n;
  bool ok = true;
  for (i64 d = t->steps - 1; ok && d > 0; d--) {
    i64 k = x - y;
    bool down = k == -d || (k != d && frontier(t, d - 1, k - 1) < frontier(t, d - 1, k + 1));
    i64 prev_k = down ? k + 1 : k - 1;
    i64 prev_x = frontier(t, d - 1, prev_k);
    i64 start_x = down ? prev_x : prev_x + 1;
    while (ok && x > start_x) x--, y--, ok = push(out, SW_EDIT_EQUAL, x, y);
    if (down) y--, ok = ok && push(out, SW_EDIT_INSERT, 0, y);
    else x--, ok = ok && push(out, SW_EDIT_DELETE, x, 0);
  }
  while (ok && x > 0) x--, y--, ok = push(out, SW_EDIT_EQUAL, x, y);
  for (size_t i = first, j = out->n; ok && i + 1 < j; i++, j--) {
    uint8_t kind = out->kind[i];
    uint32_t ea = out->a[i], eb = out->b[i];
    out->kind[i] = out->kind[j - 1], out->a[i] = out->a[j - 1], out->b[i] = out->b[j - 1];
    out->kind[j - 1] = kind, out->a[j - 1] = ea, out->b[j - 1] = eb;
  }
  return ok;
}

/* myers_diff.ts greedyDiff: the greedy search of D steps with its trace
 * (the band of each step), then the backtrack. */
static bool greedy(const int32_t *a, i64 n, const int32_t *b, i64 m, i64 D, int32_t *v, struct sw_edits *out) {
  struct trace t;
  bool ok = trace_room(&t, n, m, D, D) && trace_of(a, n, b, m, D, D, v, &t) == D && backtrack(&t, n, m, out);
  trace_free(&t);
  return ok;
}

/* myers_diff.ts furthestPath from its trace `t` of `edits` steps: the path
 * that reaches furthest inside the graph, the cell nearest diagonal `goal`
 * on a tie. */
static bool furthest(const struct trace *t, i64 n, i64 m, i64 edits, i64 goal, struct sw_edits *out) {
  i64 best_x = 0, best_y = 0;
  bool found = false;
  for (i64 k = t->lo[edits]; k <= edits; k += 2) {
    i64 x = frontier(t, edits, k), y = x - k;
    if (x > n || y > m) continue;
    bool better = !found || x + y > best_x + best_y ||
                  (x + y == best_x + best_y && absolute(k - goal) < absolute(best_x - best_y - goal));
    if (better) best_x = x, best_y = y, found = true;
  }
  return backtrack(t, best_x, best_y, out);
}

/* The linear-space search's state: both sequences, the script, and the
 * frontiers, sized for the whole input (off: diagonal 0). */
struct linear {
  const int32_t *a, *b;
  struct sw_edits *out;
  int32_t *vf, *vb;
  i64 off;
  bool failed;
};

/* A middle snake (x, y) -> (u, w) and the edits each side of it. */
struct snake {
  i64 x, y, u, w, left, right;
};

/* myers_diff.ts middleSnake of the box, kept to the band of u (raised to
 * |n - m| and its parity); false when D > u. */
static bool middle(const struct linear *L, i64 a_lo, i64 a_hi, i64 b_lo, i64 b_hi, i64 u, struct snake *s) {
  const int32_t *a = L->a, *b = L->b;
  int32_t *vf = L->vf, *vb = L->vb;
  i64 off = L->off, n = a_hi - a_lo, m = b_hi - b_lo, delta = n - m;
  bool odd = (delta & 1) != 0;
  if (u < absolute(delta)) u = absolute(delta);
  if ((u - delta) & 1) u++;
  i64 last = (u + 1) / 2, half = (n + m + 1) / 2;
  if (last > half) last = half;
  vf[off + 1] = 0;
  vb[off + 1] = 0;
  for (i64 d = 0; d <= last; d++) {
    i64 lo, hi;
    if (!band(d, delta, u, &lo, &hi)) return false;
    for (i64 k = lo; k <= hi; k += 2) {
      i64 x = step_x(vf, off, d, k), y = x - k, x0 = x, y0 = y;
      while (x < n && y < m && a[a_lo + x] == b[b_lo + y]) x++, y++;
      vf[off + k] = (int32_t)x;
      i64 kb = delta - k;
      /* The backward cell read must be one of the band's, written at d-1. */
      if (odd && kb >= -(d - 1) && kb <= d - 1 && d - 1 + absolute(k) <= u && x + vb[off + kb] >= n) {
        *s = (struct snake){x0, y0, x, y, d, d - 1};
        return true;
      }
    }
    for (i64 k = lo; k <= hi; k += 2) {
      i64 x = step_x(vb, off, d, k), y = x - k, x0 = x, y0 = y;
      while (x < n && y < m && a[a_hi - 1 - x] == b[b_hi - 1 - y]) x++, y++;
      vb[off + k] = (int32_t)x;
      i64 kf = delta - k;
      if (!odd && kf >= -d && kf <= d && d + absolute(k) <= u && x + vf[off + kf] >= n) {
        *s = (struct snake){n - x, m - y, n - x0, m - y0, d, d};
        return true;
      }
    }
  }
  return false;
}

/* myers_diff.ts linearDiff of a box whose script has about u edits. */
static void linear(struct linear *L, i64 a_lo, i64 a_hi, i64 b_lo, i64 b_hi, i64 u) {
  const int32_t *a = L->a, *b = L->b;
  struct sw_edits *out = L->out;
  if (L->failed) return;
  bool ok = true;
  while (ok && a_lo < a_hi && b_lo < b_hi && a[a_lo] == b[b_lo]) ok = push(out, SW_EDIT_EQUAL, a_lo++, b_lo++);
  i64 a_end = a_hi, b_end = b_hi;
  while (a_end > a_lo && b_end > b_lo && a[a_end - 1] == b[b_end - 1]) a_end--, b_end--;
  if (a_lo == a_end) {
    for (i64 j = b_lo; ok && j < b_end; j++) ok = push(out, SW_EDIT_INSERT, 0, j);
  } else if (b_lo == b_end) {
    for (i64 i = a_lo; ok && i < a_end; i++) ok = push(out, SW_EDIT_DELETE, i, 0);
  } else if (ok) {
    struct snake s;
    i64 n = a_end - a_lo, m = b_end - b_lo;
    /* u is D when the halves' counts hold; grown when they do not. */
    while (!middle(L, a_lo, a_end, b_lo, b_end, u, &s)) {
      if (u >= n + m) {
        L->failed = true;
        return;
      }
      u = grow(u < absolute(n - m) ? absolute(n - m) : u, n - m, n + m);
    }
    linear(L, a_lo, a_lo + s.x, b_lo, b_lo + s.y, s.left);
    for (i64 i = s.x, j = s.y; ok && i < s.u; i++, j++) ok = push(out, SW_EDIT_EQUAL, a_lo + i, b_lo + j);
    linear(L, a_lo + s.u, a_end, b_lo + s.w, b_end, s.right);
  }
  for (i64 i = a_end, j = b_end; ok && i < a_hi; i++, j++) ok = push(out, SW_EDIT_EQUAL, i, j);
  if (!ok) L->failed = true;
}

/* myers_diff.ts PIECE and PIECE_EDITS. */
#define PIECE 512
#define PIECE_EDITS 256

/* A band past every diagonal a search of `edits` steps of a box of n by
 * m reaches: all of them. */
#define EVERY_DIAGONAL(n, m, edits) ((n) + (m) + 2 * (edits) + 2)

/* myers_diff.ts piecewiseDiff, appended to `out`. */
static bool piecewise(const int32_t *a, i64 n, const int32_t *b, i64 m, struct sw_edits *out) {
  int32_t v[4 * PIECE + 3];
  struct sw_edits script = {0};
  /* One search a piece, over every diagonal, until a cell reaches its end
   * (its script where it has at most PIECE_EDITS edits) or PIECE_EDITS
   * steps (its furthest path where it has more): a probe, then a second
   * search (banded to D, or over every diagonal), went over its cells
   * twice. The band greedy() keeps to computes its cells as the search
   * over every diagonal does: the path back from the end is the same. */
  struct trace all;
  bool ok = trace_room(&all, PIECE, PIECE, PIECE_EDITS, EVERY_DIAGONAL(PIECE, PIECE, PIECE_EDITS));
  for (i64 x = 0, y = 0; ok && (x < n || y < m);) {
    const i64 na = n - x < PIECE ? n - x : PIECE, nb = m - y < PIECE ? m - y : PIECE;
    const bool last = x + na == n && y + nb == m;
    const i64 d = trace_of(a + x, na, b + y, nb, PIECE_EDITS, EVERY_DIAGONAL(na, nb, PIECE_EDITS), v, &all);
    const bool whole = d >= 0;
    script.n = 0;
    ok = whole ? backtrack(&all, na, nb, &script) : furthest(&all, na, nb, PIECE_EDITS, n - x - (m - y), &script);
    i64 ta = 0, tb = 0;
    for (size_t i = 0; ok && i < script.n; i++) {
      const uint8_t kind = script.kind[i];
      if (kind == SW_EDIT_EQUAL) ok = push(out, kind, x + ta++, y + tb++);
      else if (kind == SW_EDIT_DELETE) ok = push(out, kind, x + ta++, 0);
      else ok = push(out, kind, 0, y + tb++);
      if (whole && !last && (ta >= PIECE / 2 || tb >= PIECE / 2)) break;
    }
    x += ta, y += tb;
  }
  sw_edits_free(&script);
  trace_free(&all);
  return ok;
}

bool sw_myers(const int32_t *a, size_t n, const int32_t *b, size_t m, uint64_t budget, uint64_t exact_steps,
              struct sw_edits *out) {
  if (n + m >= (size_t)1 << 30) return false;
  i64 N = (i64)n, M = (i64)m;
  size_t room = (size_t)(2 * (N + M) + 3);
  int32_t *v = malloc(room * sizeof *v);
  if (!v) return false;
  i64 D = shortest(a, N, b, M, v, exact_steps);
  bool ok;
  if (D == TOO_LONG) {
    ok = piecewise(a, N, b, M, out);
  } else if (D < 0) {
    ok = false; /* unreachable: the search with u = N + M always ends */
  } else if (D == 0 || 2 * (uint64_t)(D + 1) * (uint64_t)(D + 2) <= budget) {
    ok = greedy(a, N, b, M, D, v, out);
  } else {
    int32_t *vb = malloc(room * sizeof *vb);
    struct linear L = {.a = a, .b = b, .out = out, .vf = v, .vb = vb, .off = (N + M + 1) / 2 + 1};
    if (vb) linear(&L, 0, N, 0, M, D);
    ok = vb && !L.failed;
    free(vb);
  }
  free(v);
  return ok;
}

/* The script of a and b for tests (test/analysis/compare/native_test.ts):
 * kind, a and b of each edit into arrays of n + m entries; the count, or
 * -1 when memory ran out. */
SW_EXPORT int64_t stompwatch_myers_diff(const int32_t *a, uint32_t n, const int32_t *b, uint32_t m, double budget,
                                        double exact_steps, uint8_t *kind, uint32_t *ia, uint32_t *ib) {
  struct sw_edits e = {0};
  /* Whole steps, none for NaN or less than 0 (myers_diff.ts myersDiff). */
  const uint64_t steps = !(exact_steps >= 0) ? 0 : exact_steps >= 0x1p63 ? UINT64_MAX : (uint64_t)exact_steps;
  bool ok = sw_myers(a, n, b, m, budget < 0 ? 0 : (uint64_t)budget, steps, &e);
  int64_t count = ok ? (int64_t)e.n : -1;
  if (ok && e.n) {
    memcpy(kind, e.kind, e.n);
    memcpy(ia, e.a, e.n * sizeof *ia);
    memcpy(ib, e.b, e.n * sizeof *ib);
  }
  sw_edits_free(&e);
  return count;
}
