/*
 * myers.h: the edit script compare aligns two steps' op names with, the
 * same script as analysis/compare/myers_diff.ts gives for the same input
 * (that file says which script that is and why).
 */
#ifndef STOMPWATCH_MYERS_H
#define STOMPWATCH_MYERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { SW_EDIT_EQUAL = 0, SW_EDIT_DELETE = 1, SW_EDIT_INSERT = 2 };

/* An edit script in forward order: kind[i], and the index into a (equal,
 * delete) and into b (equal, insert) it names. */
struct sw_edits {
  uint8_t *kind;
  uint32_t *a, *b;
  size_t n, cap;
};

/*
 * Appends the shortest edit script turning a[0, n) into b[0, m) to `out`:
 * the greedy search's script while its trace would stay within `budget`
 * bytes, else the linear-space one, as myers_diff.ts chooses; past
 * `exact_steps` steps of the search for its length, the script found piece
 * by piece (myers_diff.ts piecewiseDiff). False when memory ran out (or
 * the input is over 2^30 elements).
 */
bool sw_myers(const int32_t *a, size_t n, const int32_t *b, size_t m, uint64_t budget, uint64_t exact_steps,
              struct sw_edits *out);

/* myers_diff.ts DEFAULT_EXACT_STEPS. */
#define SW_MYERS_EXACT_STEPS ((uint64_t)1 << 24)

void sw_edits_free(struct sw_edits *e);

#endif
