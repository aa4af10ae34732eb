/*
 * leak_ptrs.h: the Ptrs of a streaming replay (leak_stream.c) that hold
 * pending blocks, each with the head of its chain of them: a table with a
 * slot for each such Ptr and for no other. A Ptr's slot goes when its last
 * block does, so the table holds no more slots than there are pending
 * blocks, however many Ptrs the window used once (leak_ptrs.c says how).
 */
#ifndef SW_LEAK_PTRS_H
#define SW_LEAK_PTRS_H
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* A Ptr of device `dev` with pending blocks, `head` the first of them. */
struct sw_leak_ptr {
  double key;
  int32_t head;
  uint32_t dev; /* SW_LEAK_PTR_EMPTY: no Ptr in this slot */
};
#define SW_LEAK_PTR_EMPTY UINT32_MAX

struct sw_leak_ptrs {
  struct sw_leak_ptr *slots;
  uint64_t mask, used;
};

/* The hash of device `dev`'s `key` (a Ptr or an ID) that places it in the
 * replay's tables; its high bits also say which part of a split replay a
 * Ptr is of. */
static inline uint64_t sw_leak_mix(double key, uint32_t dev) {
  uint64_t bits;
  if (key == 0) key = 0; /* -0 and 0 are one key */
  memcpy(&bits, &key, sizeof bits);
  bits ^= (uint64_t)dev * 0x9e3779b97f4a7c15ULL;
  bits ^= bits >> 33;
  bits *= 0xff51afd7ed558ccdULL;
  bits ^= bits >> 33;
  return bits;
}

/* An ID's bits as an unsigned number in the same order (-0 and 0 are one
 * ID; NaN, which no replay takes, above +inf). */
static inline uint64_t sw_leak_id_order(double id) {
  uint64_t u;
  if (id == 0) id = 0;
  memcpy(&u, &id, sizeof u);
  return u >> 63 ? ~u : u | (1ULL << 63);
}

/* False when memory is short. */
bool sw_leak_ptrs_init(struct sw_leak_ptrs *t);
void sw_leak_ptrs_free(struct sw_leak_ptrs *t);
/* Device `dev`'s Ptr `key` (whose sw_leak_mix is `hash`), or NULL. */
struct sw_leak_ptr *sw_leak_ptrs_find(const struct sw_leak_ptrs *t, uint32_t dev, double key, uint64_t hash);
/* Its slot, made without blocks (head -1) when missing (the table grows:
 * slots found before are no longer valid); NULL when memory is short. */
struct sw_leak_ptr *sw_leak_ptrs_add(struct sw_leak_ptrs *t, uint32_t dev, double key, uint64_t hash);
/* Room for `more` Ptrs beyond those there, made at once (the table
 * grows once, not once each time it doubles); false when memory is short
 * (the table stays as it was). */
bool sw_leak_ptrs_reserve(struct sw_leak_ptrs *t, uint64_t more);
/* The slot emptied, its Ptr gone. Slots after it may move into it: one
 * walking the table looks at the same index again. */
void sw_leak_ptrs_remove(struct sw_leak_ptrs *t, struct sw_leak_ptr *o);
/* Where a key whose mix is `hash` is looked for first: fetched ahead. */
static inline const struct sw_leak_ptr *sw_leak_ptrs_first_probe(const struct sw_leak_ptrs *t, uint64_t hash) {
  return &t->slots[hash & t->mask];
}
#endif
