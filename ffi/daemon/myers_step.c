/*
 * myers_step.c: see myers_step.h. Two unrelated steps of a job send the
 * search for the length of their script to its step limit (2^24 cells)
 * and then piece by piece: cell by cell, that was most of compare's
 * time on them. The choice of a cell's neighbour (whichever is further)
 * was a branch, missed about every other cell there; it is a select here,
 * and the edges of the step, where there is no choice, are tests that
 * never miss: 1.8 ns a cell where it took 5.3 (2^24 cells of two random
 * steps of 100,000 ops of 30 names, this project's 2-core VM). x is kept
 * in 32 bits, as v keeps it (sw_myers takes at most 2^30 elements).
 */
#include "myers_step.h"

#include <stdbool.h>
#include <stddef.h>

/* x past the snake from (x, x - k). */
static inline int32_t snake(const int32_t *a, int32_t n, const int32_t *b, int32_t m, int32_t x, int32_t k) {
  int64_t y = (int64_t)x - k;
  while (x < n && y < m && a[x] == b[y]) x++, y++;
  return x;
}

/* The cells of sw_myers_step, `trace`: each x into xs too. */
static inline __attribute__((always_inline)) int64_t step_with(const int32_t *a, int32_t n, const int32_t *b,
                                                               int32_t m, int32_t *v, int64_t off, int32_t d,
                                                               int32_t lo, int32_t hi, int32_t *xs,
                                                               const bool trace) {
  int32_t *p = v + off + lo;
  int32_t k = lo;
  int64_t j = 0;
  /* On the lowest diagonal a cell comes down from above; on the highest
   * (d > 0) from the left; between, from whichever neighbour is further. */
  const int32_t inner_hi = hi == d && d > 0 ? hi - 2 : hi;
  for (; k <= hi; k += 2, p += 2, j++) {
    int32_t x;
    if (k == -d) {
      x = p[1];
    } else if (k > inner_hi) {
      x = p[-1] + 1;
    } else {
      const int32_t right = p[-1] + 1, down = p[1];
      x = right > down ? right : down;
    }
    x = snake(a, n, b, m, x, k);
    *p = x;
    if (trace) xs[j] = x;
    if (x >= n && (int64_t)x - k >= m) return j;
  }
  return -1;
}

int64_t sw_myers_step(const int32_t *a, int64_t n, const int32_t *b, int64_t m, int32_t *v, int64_t off, int64_t d,
                      int64_t lo, int64_t hi, int32_t *xs) {
  if (xs) return step_with(a, (int32_t)n, b, (int32_t)m, v, off, (int32_t)d, (int32_t)lo, (int32_t)hi, xs, true);
  return step_with(a, (int32_t)n, b, (int32_t)m, v, off, (int32_t)d, (int32_t)lo, (int32_t)hi, NULL, false);
}
