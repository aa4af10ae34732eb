/*
 * leak_ptrs.c: see leak_ptrs.h. Open addressing with linear probes, at
 * most three quarters full, twice as large when it would pass that. A
 * slot is removed by moving back each slot after it, up to the first
 * empty one, that its probes would otherwise no longer reach (backward
 * shift): no tombstones, so a window whose every MALLOC has a Ptr of its
 * own never fills the table with Ptrs long freed. Those had kept their
 * slots until a rebuild: on a 1.10 GB log holding 1,100,000 blocks, the
 * table (24-byte slots, with the largest FREE ID now kept in the replay's
 * FREE table) was 100 MB and its rebuilds briefly 150; it is now 32 MB of
 * 16-byte slots.
 */
#include "leak_ptrs.h"

#include "pages.h"

#define MIN_SLOTS 4096u

static struct sw_leak_ptr *slots_new(uint64_t n) {
  struct sw_leak_ptr *t = sw_pages_new(n * sizeof *t);
  if (t)
    for (uint64_t i = 0; i < n; i++) t[i].dev = SW_LEAK_PTR_EMPTY;
  return t;
}

bool sw_leak_ptrs_init(struct sw_leak_ptrs *t) {
  *t = (struct sw_leak_ptrs){.slots = slots_new(MIN_SLOTS), .mask = MIN_SLOTS - 1};
  return t->slots != NULL;
}

void sw_leak_ptrs_free(struct sw_leak_ptrs *t) {
  sw_pages_free(t->slots, t->slots ? (t->mask + 1) * sizeof *t->slots : 0);
  *t = (struct sw_leak_ptrs){0};
}

/* Device `dev`'s slot for `key`, or the empty one its probes reach first. */
static struct sw_leak_ptr *probe(const struct sw_leak_ptrs *t, uint32_t dev, double key, uint64_t hash) {
  for (uint64_t i = hash & t->mask;; i = (i + 1) & t->mask) {
    struct sw_leak_ptr *o = &t->slots[i];
    if ((o->dev == dev && o->key == key) || o->dev == SW_LEAK_PTR_EMPTY) return o;
  }
}

struct sw_leak_ptr *sw_leak_ptrs_find(const struct sw_leak_ptrs *t, uint32_t dev, double key, uint64_t hash) {
  if (key == 0) key = 0;
  struct sw_leak_ptr *o = probe(t, dev, key, hash);
  return o->dev == SW_LEAK_PTR_EMPTY ? NULL : o;
}

/* The table `n` slots large (a power of two, larger than it was), every
 * slot moved; false when memory is short. */
static bool grow_to(struct sw_leak_ptrs *t, uint64_t n) {
  const uint64_t old_n = t->mask + 1;
  struct sw_leak_ptr *fresh = slots_new(n), *old = t->slots;
  if (!fresh) return false;
  t->slots = fresh;
  t->mask = n - 1;
  for (uint64_t i = 0; i < old_n; i++)
    if (old[i].dev != SW_LEAK_PTR_EMPTY) *probe(t, old[i].dev, old[i].key, sw_leak_mix(old[i].key, old[i].dev)) = old[i];
  sw_pages_free(old, old_n * sizeof *old);
  return true;
}

bool sw_leak_ptrs_reserve(struct sw_leak_ptrs *t, uint64_t more) {
  uint64_t n = t->mask + 1;
  while (4 * (t->used + more) > 3 * n) n *= 2;
  return n == t->mask + 1 || grow_to(t, n);
}

struct sw_leak_ptr *sw_leak_ptrs_add(struct sw_leak_ptrs *t, uint32_t dev, double key, uint64_t hash) {
  if (key == 0) key = 0;
  struct sw_leak_ptr *o = probe(t, dev, key, hash);
  if (o->dev != SW_LEAK_PTR_EMPTY) return o;
  const uint64_t mask = t->mask;
  if (!sw_leak_ptrs_reserve(t, 1)) return NULL;
  if (t->mask != mask) o = probe(t, dev, key, hash);
  t->used++;
  *o = (struct sw_leak_ptr){.key = key, .head = -1, .dev = dev};
  return o;
}


void sw_leak_ptrs_remove(struct sw_leak_ptrs *t, struct sw_leak_ptr *o) {
  uint64_t hole = (uint64_t)(o - t->slots);
  for (uint64_t j = (hole + 1) & t->mask; t->slots[j].dev != SW_LEAK_PTR_EMPTY; j = (j + 1) & t->mask) {
    const struct sw_leak_ptr *m = &t->slots[j];
    const uint64_t home = sw_leak_mix(m->key, m->dev) & t->mask;
    /* m stays where its probes from `home` pass no hole on the way to j. */
    const bool reached = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (reached) continue;
    t->slots[hole] = *m;
    hole = j;
  }
  t->slots[hole].dev = SW_LEAK_PTR_EMPTY;
  t->used--;
}
