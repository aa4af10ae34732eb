/*
 * myers_step.h: one step of the greedy search of myers.c: every cell of
 * its band, each of which reads only the step before.
 */
#ifndef STOMPWATCH_MYERS_STEP_H
#define STOMPWATCH_MYERS_STEP_H

#include <stdint.h>

/*
 * Step d's cells on diagonals lo, lo + 2, ..., hi, from step d - 1's x on
 * the diagonals either side in v (diagonal k at off + k): each cell's x,
 * past its snake, into v, and into xs[j] for the j-th cell where xs is
 * given. The index of the first cell that reaches (n, m), or -1; the
 * cells after it are left as they were.
 */
int64_t sw_myers_step(const int32_t *a, int64_t n, const int32_t *b, int64_t m, int32_t *v, int64_t off, int64_t d,
                      int64_t lo, int64_t hi, int32_t *xs);

#endif
