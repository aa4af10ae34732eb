/*
 * host_blocks.c: the table of live CPU storages the hook recorded
 * (host_memory.c), which free() asks about every block the process frees.
 *
 * Open addressing. free() probes without the lock (a block not in the
 * table, the common case, is one or two slots and no atomic write); every
 * change is made under sw_host_lock. At most half the slots are ever in
 * use, so a probe always ends.
 *
 * A table full of removed slots is rebuilt. Rebuilding into the same
 * memory would pull slots from under a probe, so the rebuild fills another
 * table and publishes it, and a generation count (odd while a rebuild runs)
 * tells a probe that found nothing whether it must look again. Tables are
 * never unmapped, since a probe may still be reading one: a rebuild of the
 * same size takes the table retired by the one before (its probes are long
 * over or will see the generation move), and a grown table leaves the
 * smaller ones behind, a geometric series bounded by the largest. The tables
 * come from mmap: taking them from malloc would free through ourselves.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "hook_internal.h"

#define EMPTY 0u
#define REMOVED 1u

struct table {
  uint64_t mask;
  uint64_t used; /* live + removed slots */
  uint64_t live;
  struct sw_host_block slots[];
};

pthread_mutex_t sw_host_lock = PTHREAD_MUTEX_INITIALIZER;
uint64_t sw_host_live;

static struct table *g_table; /* probed without the lock (acquire) */
static struct table *g_spare; /* the last table retired: same size as g_table or NULL */
static uint64_t g_generation; /* odd while a rebuild runs */

static uint64_t slot_of(uint64_t addr, uint64_t mask) {
  /* Allocator blocks are 16-byte aligned or more: mix before masking. */
  return ((addr >> 4) * 0x9E3779B97F4A7C15ull >> 20) & mask;
}

static struct sw_host_block *probe(struct table *t, uint64_t addr) {
  if (!t) return NULL;
  for (uint64_t i = slot_of(addr, t->mask);; i = (i + 1) & t->mask) {
    uint64_t a = __atomic_load_n(&t->slots[i].addr, __ATOMIC_ACQUIRE);
    if (a == addr) return &t->slots[i];
    if (a == EMPTY) return NULL;
  }
}

int sw_host_blocks_may_hold(uint64_t addr) {
  if (addr <= REMOVED) return 0;
  for (;;) {
    uint64_t gen = __atomic_load_n(&g_generation, __ATOMIC_ACQUIRE);
    if (gen & 1) return 1; /* a rebuild is running: the locked look decides */
    if (probe(__atomic_load_n(&g_table, __ATOMIC_ACQUIRE), addr)) return 1;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&g_generation, __ATOMIC_RELAXED) == gen) return 0;
  }
}

static struct table *table_of(uint64_t slots) {
  size_t bytes = sizeof(struct table) + slots * sizeof(struct sw_host_block);
  if (g_spare && g_spare->mask + 1 == slots) {
    struct table *t = g_spare;
    g_spare = NULL;
    memset(t, 0, bytes);
    t->mask = slots - 1;
    return t;
  }
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  struct table *t = p;
  t->mask = slots - 1;
  return t;
}

static struct sw_host_block *put(struct table *t, const struct sw_host_block *b) {
  uint64_t i = slot_of(b->addr, t->mask);
  while (t->slots[i].addr > REMOVED) i = (i + 1) & t->mask;
  if (t->slots[i].addr == EMPTY) t->used++;
  struct sw_host_block *slot = &t->slots[i];
  slot->size = b->size;
  slot->pins = b->pins;
  slot->freed = b->freed;
  __atomic_store_n(&slot->addr, b->addr, __ATOMIC_RELEASE);
  t->live++;
  return slot;
}

/* Room for one more block, or 0 when none can be had. */
static int make_room(void) {
  struct table *t = g_table;
  if (t && (t->used + 1) * 2 <= t->mask + 1) return 1;
  uint64_t slots = 1024;
  while (t && slots < (t->live + 1) * 4) slots *= 2;
  __atomic_store_n(&g_generation, g_generation + 1, __ATOMIC_RELEASE);
  struct table *next = table_of(slots);
  if (next && t)
    for (uint64_t i = 0; i <= t->mask; i++)
      if (t->slots[i].addr > REMOVED) put(next, &t->slots[i]);
  if (next) {
    __atomic_store_n(&g_table, next, __ATOMIC_RELEASE);
    if (t && t->mask == next->mask) g_spare = t;
  }
  __atomic_store_n(&g_generation, g_generation + 1, __ATOMIC_RELEASE);
  return next != NULL;
}

struct sw_host_block *sw_host_blocks_add(uint64_t addr, uint64_t size) {
  if (!make_room()) return NULL;
  struct sw_host_block b = {addr, size, 0, 0};
  struct sw_host_block *slot = put(g_table, &b);
  __atomic_store_n(&sw_host_live, g_table->live, __ATOMIC_RELEASE);
  return slot;
}

struct sw_host_block *sw_host_blocks_find(uint64_t addr) { return addr > REMOVED ? probe(g_table, addr) : NULL; }

void sw_host_blocks_remove(struct sw_host_block *b) {
  __atomic_store_n(&b->addr, REMOVED, __ATOMIC_RELEASE);
  g_table->live--;
  __atomic_store_n(&sw_host_live, g_table->live, __ATOMIC_RELEASE);
}

struct sw_host_block *sw_host_blocks_holding(uint64_t addr, uint64_t len) {
  struct table *t = g_table;
  for (uint64_t i = 0; t && i <= t->mask; i++) {
    struct sw_host_block *b = &t->slots[i];
    if (b->addr > REMOVED && !b->freed && b->addr <= addr && addr + len <= b->addr + b->size) return b;
  }
  return NULL;
}

void sw_host_blocks_forget(void) {
  /* A forked child: none of these blocks are its to report. */
  __atomic_store_n(&g_table, NULL, __ATOMIC_RELEASE);
  g_spare = NULL;
  __atomic_store_n(&sw_host_live, 0, __ATOMIC_RELEASE);
}
