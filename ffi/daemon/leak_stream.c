/*
 * leak_stream.c: check_leaks' replay of the windows as the rows are read,
 * for windows with more rows than leak_scan.c may keep. leak_replay.c walks
 * a window's rows in ID order (file order among equal IDs): a MALLOC becomes
 * pending, a later MALLOC with its ID replaces it, a FREE clears the pending
 * blocks at its Ptr. So a MALLOC (ID m, Ptr p) leaks unless a MALLOC with ID
 * m comes after it in the file, or a FREE at p comes after it in that order
 * (an ID above m, or m and later in the file). That is a fact about the
 * rows, whatever their order in the file, and it is decided as they come:
 * - a FREE clears the pending blocks at its Ptr with IDs up to its own, and
 *   the largest FREE ID at each Ptr is kept for the rows still to come;
 * - a MALLOC replaces the pending block with its ID, is cleared at once when
 *   a FREE at its Ptr with a larger ID came before it, and is pending else.
 * A FREE ID need be kept only while a MALLOC still to come may have a
 * smaller one. A device's MALLOCs come at most its horizon of IDs below
 * its largest MALLOC ID read so far: as far as the first pass saw them
 * come (msMemScope's own logs: a few hundred), DISORDER where it gave no
 * figure (a MALLOC further back ends the replay, and the caller keeps the
 * rows instead), so a FREE that far below is forgotten; so is one at a Ptr
 * where no MALLOC is still to come, where the first pass counted them
 * (sw_leak_stream_mallocs_to_come). Memory is the pending blocks
 * (and a slot for each of their Ptrs: leak_ptrs.h), the FREEs of the
 * last horizon of IDs and the IDs a MALLOC still to come may take,
 * however many rows the window holds. At `room` blocks, or five sixths of
 * that of FREEs or IDs (16-byte slots, in tables at most half full,
 * rebuilt beside the old), the replay keeps the blocks of half the Ptrs
 * (by device and Ptr) and leaves the others to another read
 * (sw_leak_stream_split), 64 parts at most (8 where the FREEs or IDs
 * fill the room and the horizon is past DISORDER: WIDE_PARTS); past that,
 * or where one Ptr holds half the room, it ends, as it does at a MALLOC
 * without a size,
 * which the caller's replay reports (leak_replay.c).
 *
 * A MALLOC at a Ptr that no FREE of the file names (the first pass's Ptrs
 * freed, leak_freed.h) can only be cleared by a later MALLOC with its ID:
 * it waits in its device's queue only until its ID is past the horizon
 * (not at all where each MALLOC ID comes once: sw_leak_stream_ids_once),
 * then is counted, kept as a row only while among the first max_listed of
 * its bucket (struct listed_heap). So a window that frees little holds few
 * blocks, however many leak.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "ids_seen.h"
#include "leak_freed.h"
#include "leak_ptrs.h"
#include "leak_stream.h"
#include "pages.h"

/* The horizon where the first pass gave none (a TypeScript first pass). */
#define DISORDER 65536.0
#define MAX_DEVICES SW_LEAK_MAX_DEVICES
#define NONE (-1)

/* A block a MALLOC made, in a chain of those at its Ptr, or, at a Ptr
 * no FREE names (an unfreed Ptr), in its device's queue of those. */
struct block {
  /* What a FREE reads and writes of the blocks at its Ptr (the ID, the
   * link, the flags) in their first 16 bytes, which never cross a cache
   * line (48-byte blocks from a page-aligned pool): with the ID first and
   * the link after the Ptr, half the blocks a FREE cleared cost it two
   * misses, not one. */
  double id;
  int32_t next;
  bool alive; /* a leak unless cleared: not in the free list, its ID not taken */
  bool odd_id;
  bool at_unfreed_ptr; /* in its device's queue of those, or a leak listed */
  uint32_t dev, line;
  double ptr, size, offset;
};
_Static_assert(sizeof(struct block) == 48 && offsetof(struct block, at_unfreed_ptr) < 16,
               "a FREE's fields in one cache line");

/* The blocks at Ptrs never freed (sw_leak_stream_ptrs_freed) are counted
 * in buckets by their Ptr's hash, as the parts split them: a split keeps
 * the buckets of its own half (parts divide BUCKETS, MAX_STREAM_PARTS of
 * _native_window_pass.ts). */
#define BUCKETS 64u

/* A bucket's leaks that may be listed: its first max_listed by device and
 * ID, a heap with the last of them on top. */
struct listed_heap {
  struct block *v;
  uint64_t n, cap;
};

/* A device's leaks in a bucket, beside those listed. */
struct unlisted_tally {
  uint64_t count;
  unsigned __int128 bytes; /* exact: sizes below 2^64, at most 2^64 of them */
};

/* A slot of the FREE table or the ID table: device `dev`'s `key`, and a
 * value, 0 for none. In the FREE table, a Ptr's largest FREE ID plus one,
 * while a MALLOC still to come may have a smaller ID. In the ID table, the
 * block a MALLOC with this ID made, plus one, while a later MALLOC may
 * take the ID. The device (under MAX_DEVICES: 8 bits) and the value (56)
 * share a word, so a slot is 16 bytes, not 24: on a log of 64 devices,
 * each numbering its own IDs, a window remembers most of its FREEs. The
 * Ptrs' chains of pending blocks are a table of their own (leak_ptrs.h). */
struct slot {
  double key;
  uint64_t word; /* dev << VALUE_BITS | value; EMPTY_WORD: no key here */
};
#define VALUE_BITS 56
#define VALUE_MASK ((UINT64_C(1) << VALUE_BITS) - 1)
/* Device 255 with a value no ID (at most 2^53, exact) or block reaches. */
#define EMPTY_WORD UINT64_MAX
/* FREE IDs a slot holds exactly: whole numbers up to 2^53. A FREE with
 * another ID (never in msMemScope's logs) ends the replay, and the
 * caller's replay takes the window. */
#define MAX_FREE_ID 9007199254740992.0

static uint32_t slot_dev(const struct slot *o) { return (uint32_t)(o->word >> VALUE_BITS); }
static uint64_t slot_value(const struct slot *o) { return o->word & VALUE_MASK; }
static void slot_set(struct slot *o, uint64_t value) { o->word = (o->word & ~VALUE_MASK) | value; }

/* An ID table slot's block; NONE when it names none. */
static int32_t slot_block(const struct slot *o) { return (int32_t)slot_value(o) - 1; }
static void slot_set_block(struct slot *o, int32_t b) { slot_set(o, (uint64_t)(b + 1)); }

/* A FREE table slot's largest FREE ID; -inf when it holds none. */
static double slot_max_free(const struct slot *o) {
  const uint64_t v = slot_value(o);
  return v ? (double)(v - 1) : -__builtin_inf();
}

struct sw_leak_stream;

/* An open-addressing table of slots (linear probes), rebuilt when three
 * quarters full with only the slots `kept` says a later row may need. */
struct table {
  struct slot *slots;
  uint64_t mask, used;
  /* The slots a rebuild left, kept for the next rebuild of that size:
   * fresh pages cost more than the rebuild that fills them (see
   * SPARE_BYTES). */
  struct slot *spare;
  uint64_t spare_n;
  bool (*kept)(const struct sw_leak_stream *s, const struct slot *o);
};

/* Rows between the reading thread and the replaying one: a ring the
 * reader fills and publishes every PUBLISH_EVERY rows (one cache line
 * store, not one a row), and the replayer empties. */
#define QUEUE_ROWS 16384u
#define PUBLISH_EVERY 256u
/* A row in the queue, with the hashes (mix) of its Ptr's and its ID's
 * keys, which the reading thread works out: where many blocks are pending
 * the replaying one sets the pace. */
struct queued {
  struct sw_leak_stream_row row;
  uint64_t ptr_hash, id_hash;
  uint32_t malloc_slot; /* where its Ptr's MALLOCs to come are counted */
};
struct queue {
  struct queued rows[QUEUE_ROWS];
  _Alignas(64) _Atomic uint64_t head; /* rows published */
  _Atomic int closed;                 /* 0: open, 1: every row given, 2: not */
  _Atomic bool stopped;               /* the replay gave up */
  _Alignas(64) _Atomic uint64_t tail; /* rows replayed */
  _Alignas(64) uint64_t pushed;       /* the reader's own */
  uint64_t tail_seen;
};

struct sw_leak_stream {
  struct queue queue;
  struct block *blocks;
  /* Blocks made (pending, or freed and waiting in free_list), their room;
   * `room`: most blocks, and six fifths of the most slots kept at a
   * rebuild of the FREE or the ID table (at the default room, 1,041,666:
   * a table of 2^21 slots, 32 MB, where the next size would be 64). */
  uint64_t n_blocks, cap_blocks, room;
  /* Blocks out of the free list: with the leaks listed (n_listed), at most
   * `room`, so that a replay holding many blocks lists few more. */
  uint64_t held;
  int32_t free_list;
  struct sw_leak_ptrs ptrs;
  struct table frees, ids;
  double max_id[MAX_DEVICES];
  /* How far back from max_id a MALLOC of each device may still come: at
   * as far as the first pass saw its MALLOCs come (sw_leak_stream_horizon),
   * else DISORDER. */
  double horizon[MAX_DEVICES];
  /* Each device's mark C (sw_leak_stream_window_end), +inf where not given. */
  double window_end[MAX_DEVICES];
  /* Devices whose MALLOC IDs each come once (sw_leak_stream_ids_once). */
  bool ids_once[MAX_DEVICES];
  /* Some device's horizon is past DISORDER (rebuild says what of it). */
  bool wide;
  /* Blocks of part `part` of `parts` alone, `parts` at most `max_parts`
   * once split (sw_leak_stream_part). */
  uint32_t part, parts, max_parts;
  /* The replay stopped at its room, or memory was short for it. */
  bool full;
  /* The row replayed last stopped at the room (block_new, rebuild), where
   * a split may make room for it (room_made). */
  bool at_room;
  /* The Ptrs freed (leak_freed.h); NULL: every block is held until the end. */
  const uint64_t *freed;
  /* The MALLOCs to come (leak_freed.h), counted down as they are read;
   * NULL: not known, any may come at any Ptr. */
  uint8_t *mallocs;
  uint64_t max_listed;
  /* Each device's blocks at Ptrs never freed whose IDs may still be taken,
   * in the order they came (NONE: none). */
  int32_t unfreed_head[MAX_DEVICES], unfreed_tail[MAX_DEVICES];
  struct listed_heap listed[BUCKETS];
  /* Leaks in the lists, at most `room`: more splits the part, as blocks do. */
  uint64_t n_listed;
  struct unlisted_tally *unlisted; /* MAX_DEVICES x BUCKETS */
};

/* Whether a FREE ID is below every ID of device `dev` still to come. */
static bool forgotten(const struct sw_leak_stream *s, uint32_t dev, double id) {
  return id <= s->max_id[dev] - s->horizon[dev];
}

/* Whether no MALLOC still to come is at a Ptr counted in `malloc_slot`. */
static bool none_to_come(const struct sw_leak_stream *s, uint32_t malloc_slot) {
  return s->mallocs && s->mallocs[malloc_slot] == 0;
}

/* Where the MALLOCs to come at `ptr` are counted. */
static uint32_t malloc_slot_of(double ptr) { return sw_leak_mallocs_slot(sw_leak_freed_key(ptr)); }

/* Whether device `dev`'s FREE at `ptr` (its MALLOCs to come counted in
 * `malloc_slot`) with `id` may clear a MALLOC still to come: one with a
 * smaller ID, at its Ptr. */
static bool free_needed(const struct sw_leak_stream *s, uint32_t dev, uint32_t malloc_slot, double id) {
  return !forgotten(s, dev, id) && !none_to_come(s, malloc_slot);
}

/* Whether a MALLOC still to come may take device `dev`'s `id`. */
static bool id_may_come(const struct sw_leak_stream *s, uint32_t dev, double id) {
  return !s->ids_once[dev] && !forgotten(s, dev, id);
}

#define MIN_SLOTS 4096u

/* The parts a replay whose horizon is past DISORDER may split into where
 * its FREEs or IDs fill the room (its pending blocks split it up to 64, as
 * any replay's): a 1 GB log written as msMemScope writes one, whose 3.7M
 * FREEs each free a Ptr of its own, 1.70 s in parts, where the TypeScript
 * passes took 27 s and 650 MB. Past them, where more would be needed, a
 * part is a read of the whole log each. */
#define WIDE_PARTS 8u

/* The largest table that a rebuild makes four times as large (slots_for). */
#define SMALL_BYTES ((uint64_t)2 << 20)

/* A table's size for `live` slots: at most half full, a power of two (it
 * is rebuilt at three quarters); a small one, at most an eighth full. A
 * table steady at tens of thousands of slots (the IDs, or the FREEs, of
 * a horizon of IDs) is rebuilt each time a quarter of it is new, and
 * every rebuild moves each slot kept: on a 1.02 GB log holding 500,000
 * blocks, 3.74M slots moved, 1.84M of them in 74 rebuilds of the ID
 * table; 2.02M with the small tables so spread. */
static uint64_t slots_for(uint64_t live) {
  uint64_t n = MIN_SLOTS;
  while (n < 2 * live) n *= 2;
  return n * sizeof(struct slot) <= SMALL_BYTES ? 4 * n : n;
}

/* Room for `n` slots, all empty; NULL when memory is short. */
static struct slot *slots_new(uint64_t n) {
  struct slot *t = sw_pages_new(n * sizeof *t);
  if (t)
    for (uint64_t i = 0; i < n; i++) t[i].word = EMPTY_WORD;
  return t;
}

/* The largest table whose slots a rebuild keeps for the next: a table
 * steady at tens of thousands of slots (the FREEs of a horizon of
 * IDs) is rebuilt every few thousand rows, and each rebuild faulted in
 * fresh pages for its new slots (2 MB at 65,536); a larger one is rebuilt
 * rarely, and its spare would hold memory the replay's room counts on. */
#define SPARE_BYTES ((uint64_t)8 << 20)

/* Room for `n` slots, all empty, from `t`'s spare where it has that room. */
static struct slot *slots_for_table(struct table *t, uint64_t n) {
  if (t->spare && t->spare_n == n) {
    struct slot *slots = t->spare;
    t->spare = NULL;
    for (uint64_t i = 0; i < n; i++) slots[i].word = EMPTY_WORD;
    return slots;
  }
  return slots_new(n);
}

/* Slots a rebuild is done with: `t`'s spare when small enough. */
static void slots_done(struct table *t, struct slot *slots, uint64_t n) {
  sw_pages_free(t->spare, t->spare_n * sizeof *t->spare);
  t->spare = NULL;
  if (n * sizeof *slots > SPARE_BYTES) {
    sw_pages_free(slots, n * sizeof *slots);
    return;
  }
  t->spare = slots;
  t->spare_n = n;
}

/* Device `dev`'s slot for `key` in `t`, made when missing; NULL when memory
 * is short or the slots a rebuild keeps pass the room. */
static struct slot *slot_of(struct sw_leak_stream *s, struct table *t, uint32_t dev, double key);

/* Slots ahead of the one a rebuild looks at whose Ptr's MALLOCs to come
 * are fetched. */
#define REBUILD_AHEAD 16u

/* The table anew, with only the slots it keeps. */
static bool rebuild(struct sw_leak_stream *s, struct table *t) {
  uint64_t live = 0;
  /* A FREE's slot is kept by its Ptr's MALLOCs to come, where known: a
   * miss a slot, fetched ahead. */
  const bool frees = t == &s->frees && s->mallocs;
  for (uint64_t i = 0; i <= t->mask; i++) {
    if (frees && i + REBUILD_AHEAD <= t->mask && t->slots[i + REBUILD_AHEAD].word != EMPTY_WORD)
      __builtin_prefetch(&s->mallocs[malloc_slot_of(t->slots[i + REBUILD_AHEAD].key)]);
    live += t->slots[i].word != EMPTY_WORD && t->kept(s, &t->slots[i]);
  }
  if (live > s->room / 6 * 5) {
    /* Past DISORDER (one MALLOC far back: two runs' logs joined, IDs
     * that jump, a log written as msMemScope writes one, each MALLOC row
     * at its block's free), the FREE table may hold a slot for each Ptr
     * freed in the window, and each part is a read of the whole log
     * (3,077 reads of a test log): WIDE_PARTS at most, then the replay
     * ends, as one that met a MALLOC that far back did, and the caller
     * keeps the rows instead. */
    if (!s->wide || 2 * (uint64_t)s->parts <= WIDE_PARTS) s->at_room = true;
    return false;
  }
  uint64_t n = slots_for(live);
  struct slot *fresh = slots_for_table(t, n), *old = t->slots;
  if (!fresh) {
    s->full = true;
    return false;
  }
  uint64_t old_mask = t->mask;
  t->slots = fresh;
  t->mask = n - 1;
  t->used = 0;
  for (uint64_t i = 0; i <= old_mask; i++) {
    const struct slot *o = &old[i];
    if (o->word != EMPTY_WORD && t->kept(s, o)) *slot_of(s, t, slot_dev(o), o->key) = *o;
  }
  slots_done(t, old, old_mask + 1);
  return true;
}

/* Device `dev`'s slot for `key` (whose mix is `hash`) in `t`, or the
 * empty one its probes reached first (tables are never full: rebuilt at
 * three quarters). */
static struct slot *probe(const struct table *t, uint32_t dev, double key, uint64_t hash) {
  for (uint64_t i = hash & t->mask;; i = (i + 1) & t->mask) {
    struct slot *o = &t->slots[i];
    if ((slot_dev(o) == dev && o->key == key) || o->word == EMPTY_WORD) return o;
  }
}

/* slot_of, for a key whose mix is `hash`. */
static struct slot *slot_at(struct sw_leak_stream *s, struct table *t, uint32_t dev, double key, uint64_t hash) {
  if (key == 0) key = 0; /* -0 and 0 are one key */
  struct slot *o = probe(t, dev, key, hash);
  if (o->word != EMPTY_WORD) return o;
  if (4 * (t->used + 1) > 3 * (t->mask + 1)) {
    if (!rebuild(s, t)) return NULL;
    return slot_at(s, t, dev, key, hash);
  }
  t->used++;
  *o = (struct slot){.key = key, .word = (uint64_t)dev << VALUE_BITS};
  return o;
}

static struct slot *slot_of(struct sw_leak_stream *s, struct table *t, uint32_t dev, double key) {
  return slot_at(s, t, dev, key, sw_leak_mix(key, dev));
}

/* Device `dev`'s slot for `key` (whose mix is `hash`) in `t`; NULL when
 * it has none. */
static struct slot *slot_found(const struct table *t, uint32_t dev, double key, uint64_t hash) {
  struct slot *o = probe(t, dev, key, hash);
  return o->word == EMPTY_WORD ? NULL : o;
}

/* A Ptr's largest FREE ID is needed while a later MALLOC may come before it. */
static bool free_kept(const struct sw_leak_stream *s, const struct slot *o) {
  return free_needed(s, slot_dev(o), malloc_slot_of(o->key), slot_max_free(o));
}

/* Whether block `b` is the live one device `dev` made for `id`. */
static bool made_for(const struct sw_leak_stream *s, int32_t b, uint32_t dev, double id) {
  return b != NONE && s->blocks[b].alive && s->blocks[b].dev == dev && s->blocks[b].id == id;
}

/* An ID's slot is needed while a later MALLOC may take the ID from its
 * block, which it no longer can once the block has gone (made_for says so
 * on use: a later MALLOC with the ID then takes nothing). Within a horizon
 * of DISORDER, the slots of gone blocks are kept until forgotten: reading
 * each slot's block here would cost a cache miss a slot. Past it (a log
 * written as msMemScope writes one: each MALLOC row at its block's free, a
 * long-lived block's far back), they would be every ID of the window: past
 * the room, the replay ended, and a 1 GB log took the TypeScript passes
 * 24-33 s and 600 MB; its blocks read, 1.5 s. */
static bool id_kept(const struct sw_leak_stream *s, const struct slot *o) {
  const bool taken = s->wide ? !made_for(s, slot_block(o), slot_dev(o), o->key) : slot_block(o) == NONE;
  return !taken && !forgotten(s, slot_dev(o), o->key);
}

static bool table_init(struct table *t, bool (*kept)(const struct sw_leak_stream *, const struct slot *)) {
  *t = (struct table){.slots = slots_new(MIN_SLOTS), .mask = MIN_SLOTS - 1, .kept = kept};
  return t->slots != NULL;
}

struct sw_leak_stream *sw_leak_stream_new(uint64_t room) {
  struct sw_leak_stream *s = sw_pages_new(sizeof *s); /* zeroed */
  if (!s) return NULL;
  s->room = room;
  s->free_list = NONE;
  bool made = sw_leak_ptrs_init(&s->ptrs);
  made = table_init(&s->frees, free_kept) && made;
  made = table_init(&s->ids, id_kept) && made;
  for (int k = 0; k < MAX_DEVICES; k++) {
    s->max_id[k] = -__builtin_inf();
    s->horizon[k] = DISORDER;
    s->window_end[k] = __builtin_inf();
    s->unfreed_head[k] = s->unfreed_tail[k] = NONE;
  }
  if (!made) {
    sw_leak_stream_free(s);
    return NULL;
  }
  return s;
}

/* A horizon of `disorder` + 1 IDs: a MALLOC exactly `disorder` back is
 * still in order. Another `disorder` (NaN, negative) leaves DISORDER. */
void sw_leak_stream_horizon(struct sw_leak_stream *s, uint32_t dev, double disorder) {
  if (!(dev < MAX_DEVICES && disorder >= 0)) return;
  s->horizon[dev] = disorder + 1;
  if (disorder + 1 > DISORDER) s->wide = true;
}

void sw_leak_stream_ids_once(struct sw_leak_stream *s, uint32_t dev) {
  if (dev < MAX_DEVICES) s->ids_once[dev] = true;
}

void sw_leak_stream_window_end(struct sw_leak_stream *s, uint32_t dev, double c) {
  if (dev < MAX_DEVICES && c == c) s->window_end[dev] = c;
}

void sw_leak_stream_part(struct sw_leak_stream *s, uint32_t part, uint32_t parts, uint32_t max_parts) {
  s->part = part;
  s->parts = parts > 1 ? parts : 1;
  s->max_parts = max_parts > s->parts ? max_parts : s->parts;
}

uint32_t sw_leak_stream_parts(const struct sw_leak_stream *s) { return s->parts; }

bool sw_leak_stream_full(const struct sw_leak_stream *s) { return s->full; }

/* Whether device `dev`'s blocks at `ptr` are this replay's: the hash's
 * high bits, as its low ones place slots in the tables (a part whose keys
 * all shared them would crowd a table's probes). */
static bool mine_hash(const struct sw_leak_stream *s, uint64_t ptr_hash) {
  return s->parts <= 1 || (uint32_t)(ptr_hash >> 32) % s->parts == s->part;
}

static bool mine(const struct sw_leak_stream *s, uint32_t dev, double ptr) {
  return s->parts <= 1 || mine_hash(s, sw_leak_mix(ptr, dev));
}

bool sw_leak_stream_mine(const struct sw_leak_stream *s, uint32_t dev, double ptr) { return mine(s, dev, ptr); }

/* The tables' slots, no longer needed once the replay is over: their
 * memory (tens of MB where many blocks are pending) goes back before the
 * leaks are sorted and written out. */
static void tables_free(struct sw_leak_stream *s) {
  sw_leak_ptrs_free(&s->ptrs);
  struct table *tables[2] = {&s->frees, &s->ids};
  for (int k = 0; k < 2; k++) {
    struct table *t = tables[k];
    sw_pages_free(t->slots, (t->mask + 1) * sizeof *t->slots);
    sw_pages_free(t->spare, t->spare_n * sizeof *t->spare);
    t->slots = t->spare = NULL;
    t->mask = t->spare_n = 0;
  }
}

/* Bucket j's listed leaks, gone. */
static void listed_free(struct listed_heap *l) {
  free(l->v);
  *l = (struct listed_heap){0};
}

void sw_leak_stream_free(struct sw_leak_stream *s) {
  if (!s) return;
  sw_pages_free(s->blocks, s->cap_blocks * sizeof *s->blocks);
  tables_free(s);
  for (uint32_t j = 0; j < BUCKETS; j++) listed_free(&s->listed[j]);
  sw_pages_free(s->unlisted, MAX_DEVICES * BUCKETS * sizeof *s->unlisted);
  sw_pages_free(s, sizeof *s);
}

/* Device `dev`'s MALLOC with `id` read: false when it comes too far back. */
static bool in_order(struct sw_leak_stream *s, uint32_t dev, double id) {
  if (dev >= MAX_DEVICES || id != id) return false;
  if (id > s->max_id[dev]) s->max_id[dev] = id;
  return !forgotten(s, dev, id);
}

/* Block `b` (alive) into the free list, out of any chain. */
static void block_gone(struct sw_leak_stream *s, int32_t b) {
  s->held--;
  s->blocks[b].alive = false;
  s->blocks[b].next = s->free_list;
  s->free_list = b;
}

/* Takes block `b` out of its Ptr's chain, into the free list; the Ptr
 * goes with its last block. */
static void unlink_block(struct sw_leak_stream *s, int32_t b) {
  struct block *k = &s->blocks[b];
  /* A Ptr with a block in its chain has its slot. */
  struct sw_leak_ptr *at = sw_leak_ptrs_find(&s->ptrs, k->dev, k->ptr, sw_leak_mix(k->ptr, k->dev));
  for (int32_t *link = &at->head; *link != NONE; link = &s->blocks[*link].next) {
    if (*link != b) continue;
    *link = k->next;
    block_gone(s, b);
    if (at->head == NONE) sw_leak_ptrs_remove(&s->ptrs, at);
    return;
  }
}

void sw_leak_stream_ptrs_freed(struct sw_leak_stream *s, const uint64_t *freed, uint64_t max_listed) {
  /* Parts that split a bucket (never: TypeScript gives powers of two up
   * to BUCKETS) would share its counts: held to the end there, as before. */
  if (BUCKETS % s->max_parts || BUCKETS % s->parts) return;
  s->unlisted = sw_pages_new(MAX_DEVICES * BUCKETS * sizeof *s->unlisted);
  if (!s->unlisted) return;
  s->freed = freed;
  s->max_listed = max_listed;
}

void sw_leak_stream_mallocs_to_come(struct sw_leak_stream *s, uint8_t *mallocs) { s->mallocs = mallocs; }

const uint8_t *sw_leak_stream_mallocs_at(const struct sw_leak_stream *s, double ptr) {
  return s->mallocs ? &s->mallocs[malloc_slot_of(ptr)] : NULL;
}

static uint32_t bucket_of(const struct block *k) { return (uint32_t)(sw_leak_mix(k->ptr, k->dev) >> 32) % BUCKETS; }

static bool bucket_mine(const struct sw_leak_stream *s, uint32_t j) { return s->parts <= 1 || j % s->parts == s->part; }

/* Whether MALLOC row `r` is at a Ptr no FREE of the file names, so that
 * only a later MALLOC with its ID clears it, and its size can be summed
 * exactly (below 2^64; a larger one is held as any other block). */
static bool row_at_unfreed_ptr(const struct sw_leak_stream *s, const struct sw_leak_stream_row *r) {
  return s->freed && r->size >= 0 && r->size < 0x1p64 &&
         !sw_leak_freed_may_have(s->freed, sw_leak_freed_key(r->ptr), s->window_end[r->dev]);
}

bool sw_leak_stream_at_unfreed_ptr(const struct sw_leak_stream *s, const struct sw_leak_stream_row *r) {
  return row_at_unfreed_ptr(s, r);
}

/* Whether leak x is listed before leak y: by device, ID, place in the file. */
static bool listed_before(const struct block *x, const struct block *y) {
  if (x->dev != y->dev) return x->dev < y->dev;
  if (x->id != y->id) return x->id < y->id;
  return x->offset < y->offset;
}

/* The heap of `l` from its top, the last listed on top, with `k` put at
 * its top (its last slot, when it grows). */
static void listed_sift(struct listed_heap *l, uint64_t at, const struct block *k) {
  for (;;) {
    uint64_t child = 2 * at + 1;
    if (child >= l->n) break;
    if (child + 1 < l->n && listed_before(&l->v[child], &l->v[child + 1])) child++;
    if (!listed_before(k, &l->v[child])) break;
    l->v[at] = l->v[child];
    at = child;
  }
  l->v[at] = *k;
}

static void listed_push(struct listed_heap *l, const struct block *k) {
  uint64_t at = l->n++;
  while (at > 0 && listed_before(&l->v[(at - 1) / 2], k)) {
    l->v[at] = l->v[(at - 1) / 2];
    at = (at - 1) / 2;
  }
  l->v[at] = *k;
}

static void count_unlisted(struct sw_leak_stream *s, uint32_t j, const struct block *k) {
  struct unlisted_tally *u = &s->unlisted[k->dev * BUCKETS + j];
  u->count++;
  u->bytes += (uint64_t)k->size;
}

/* Leak `k`, at a Ptr never freed, whose ID can come no more: listed while
 * among its bucket's first max_listed, counted else. `in_pool`: `k` is a
 * held block, whose room it gives up. False at the room, or when memory is
 * short. */
static bool settled(struct sw_leak_stream *s, const struct block *k, bool in_pool) {
  const uint32_t j = bucket_of(k);
  struct listed_heap *l = &s->listed[j];
  if (l->n < s->max_listed) {
    if (s->held - in_pool + s->n_listed >= s->room) {
      s->at_room = true;
      return false;
    }
    if (l->n == l->cap) {
      const uint64_t twice = l->cap ? 2 * l->cap : 64, cap = twice < s->max_listed ? twice : s->max_listed;
      struct block *grown = realloc(l->v, cap * sizeof *grown);
      if (!grown) {
        s->full = true;
        return false;
      }
      l->v = grown;
      l->cap = cap;
    }
    listed_push(l, k);
    s->n_listed++;
    return true;
  }
  if (l->n && listed_before(k, &l->v[0])) {
    count_unlisted(s, j, &l->v[0]);
    listed_sift(l, 0, k);
    return true;
  }
  count_unlisted(s, j, k);
  return true;
}

/* Device `dev`'s blocks at Ptrs never freed whose IDs can come no more
 * (those at the front of its queue: the others settle later), settled. One
 * that stops at the room stays in the queue, for a split to drop or keep. */
static bool settle_due(struct sw_leak_stream *s, uint32_t dev) {
  for (int32_t b = s->unfreed_head[dev]; b != NONE && forgotten(s, dev, s->blocks[b].id); b = s->unfreed_head[dev]) {
    struct block *k = &s->blocks[b];
    if (k->alive && !settled(s, k, true)) return false;
    s->unfreed_head[dev] = k->next;
    if (k->next == NONE) s->unfreed_tail[dev] = NONE;
    k->at_unfreed_ptr = false;
    block_gone(s, b);
  }
  return true;
}

/* Each device's queue of blocks at unfreed Ptrs without the blocks gone
 * from it (their IDs taken, or of another part), which go to the free
 * list: how many went. */
static uint64_t queues_without_gone(struct sw_leak_stream *s) {
  uint64_t gone = 0;
  for (uint32_t dev = 0; dev < MAX_DEVICES; dev++) {
    int32_t *link = &s->unfreed_head[dev], last = NONE;
    while (*link != NONE) {
      const int32_t b = *link;
      if (s->blocks[b].alive) {
        last = b;
        link = &s->blocks[b].next;
        continue;
      }
      *link = s->blocks[b].next;
      s->blocks[b].at_unfreed_ptr = false;
      block_gone(s, b);
      gone++;
    }
    s->unfreed_tail[dev] = last;
  }
  return gone;
}

/* A block for MALLOC row `r`, alive, in no chain or queue yet. */
static struct block block_of(const struct sw_leak_stream_row *r) {
  return (struct block){.id = r->id, .ptr = r->ptr, .size = r->size, .offset = r->offset, .line = r->line,
                        .dev = r->dev, .next = NONE, .alive = true, .odd_id = r->odd_id};
}

/* See leak_stream.h. The blocks a split drops are those a replay of that
 * half alone would never have made: a Ptr's rows never touch another
 * Ptr's blocks, and a MALLOC of another part takes its ID from this one's
 * (replay_malloc) as before the split. */
bool sw_leak_stream_split(struct sw_leak_stream *s) {
  if (2 * (uint64_t)s->parts > s->max_parts) return false;
  s->parts *= 2;
  /* The other half's Ptrs go, their blocks to the free list. A removal
   * may move a later slot into this one: looked at again. */
  for (uint64_t i = 0; i <= s->ptrs.mask;) {
    struct sw_leak_ptr *o = &s->ptrs.slots[i];
    if (o->dev == SW_LEAK_PTR_EMPTY || mine(s, o->dev, o->key)) {
      i++;
      continue;
    }
    for (int32_t b = o->head, next; b != NONE; b = next) {
      next = s->blocks[b].next;
      block_gone(s, b);
    }
    sw_leak_ptrs_remove(&s->ptrs, o);
  }
  /* Their FREEs, never asked for by this part again: a rebuild drops them. */
  for (uint64_t i = 0; i <= s->frees.mask; i++) {
    struct slot *o = &s->frees.slots[i];
    if (o->word != EMPTY_WORD && !mine(s, slot_dev(o), o->key)) slot_set(o, 0);
  }
  /* Blocks at unfreed Ptrs of the other half go, their buckets' counts
   * and lists too. */
  for (uint32_t dev = 0; dev < MAX_DEVICES; dev++)
    for (int32_t b = s->unfreed_head[dev]; b != NONE; b = s->blocks[b].next)
      if (!mine(s, dev, s->blocks[b].ptr)) s->blocks[b].alive = false;
  queues_without_gone(s);
  for (uint32_t j = 0; s->unlisted && j < BUCKETS; j++) {
    if (bucket_mine(s, j)) continue;
    s->n_listed -= s->listed[j].n;
    listed_free(&s->listed[j]);
    for (uint32_t dev = 0; dev < MAX_DEVICES; dev++) s->unlisted[dev * BUCKETS + j] = (struct unlisted_tally){0};
  }
  /* IDs whose blocks went: a rebuild drops their slots too. */
  for (uint64_t i = 0; i <= s->ids.mask; i++) {
    struct slot *o = &s->ids.slots[i];
    if (o->word != EMPTY_WORD && !made_for(s, slot_block(o), slot_dev(o), o->key)) slot_set_block(o, NONE);
  }
  return true;
}

/* Whether one Ptr holds half the room or more: no part of the Ptrs holds
 * fewer blocks than any of its Ptrs, so more parts would each stop at the
 * room too, or hold little besides (a log with 1,000,100 blocks pending
 * at one Ptr was read in 2, 4, ... 256 parts, 55 s, before it was handed
 * to the TypeScript passes). Walks every chain: it runs once a split. */
static bool one_ptr_holds_half(const struct sw_leak_stream *s) {
  for (uint64_t i = 0; i <= s->ptrs.mask; i++) {
    const struct sw_leak_ptr *o = &s->ptrs.slots[i];
    if (o->dev == SW_LEAK_PTR_EMPTY) continue;
    uint64_t n = 0;
    for (int32_t b = o->head; b != NONE; b = s->blocks[b].next) n++;
    if (2 * n >= s->room) return true;
  }
  return false;
}

/* Whether a row that stopped at the room may be replayed again: the part
 * split in two, unless one Ptr holds half the room (that Ptr's part would
 * soon be as full again). A row's replay up to where it stopped changes
 * nothing that replaying it again changes otherwise: an ID it took stays
 * taken, a largest ID stays the largest; where its Ptr went to the other
 * half, it is replayed as another part's. */
static bool room_made(struct sw_leak_stream *s) {
  if (!s->at_room) return false;
  s->at_room = false;
  /* Blocks whose IDs were taken may fill the queues at unfreed Ptrs (a
   * window of MALLOCs all of one ID): their room first. */
  if (queues_without_gone(s)) return true;
  const bool one_ptr = one_ptr_holds_half(s);
  if (!one_ptr && sw_leak_stream_split(s)) return true;
  s->full = !one_ptr;
  return false;
}

/* The pool of blocks grown to room for `cap`; false when memory is short. */
static bool pool_grown(struct sw_leak_stream *s, uint64_t cap) {
  struct block *grown = s->blocks ? mremap(s->blocks, s->cap_blocks * sizeof *grown, cap * sizeof *grown, MREMAP_MAYMOVE)
                                  : sw_pages_new(cap * sizeof *grown);
  if (grown == MAP_FAILED || !grown) return false;
  s->blocks = grown;
  s->cap_blocks = cap;
  return true;
}

/* A block from the free list or the end of the pool; NONE at the room,
 * which the pool and the listed leaks share. */
static int32_t block_new(struct sw_leak_stream *s) {
  if (s->held + s->n_listed >= s->room) {
    s->at_room = true;
    return NONE;
  }
  if (s->free_list != NONE) {
    int32_t b = s->free_list;
    s->free_list = s->blocks[b].next;
    s->held++;
    return b;
  }
  if (s->n_blocks >= INT32_MAX) {
    s->at_room = true;
    return NONE;
  }
  if (s->n_blocks == s->cap_blocks && !pool_grown(s, s->cap_blocks ? 2 * s->cap_blocks : 4096)) {
    s->full = true;
    return NONE;
  }
  s->held++;
  return (int32_t)s->n_blocks++;
}

/* MALLOC row `r` made pending: a block first in its Ptr's chain (its
 * Ptr's mix: `ptr_hash`), the one its ID's slot `same` names (none:
 * NULL). False past the room, or when memory is short. */
static bool pend(struct sw_leak_stream *s, const struct sw_leak_stream_row *r, uint64_t ptr_hash, struct slot *same) {
  int32_t b = block_new(s);
  if (b == NONE) return false;
  struct sw_leak_ptr *at = sw_leak_ptrs_add(&s->ptrs, r->dev, r->ptr, ptr_hash);
  if (!at) {
    s->full = true;
    block_gone(s, b);
    return false;
  }
  s->blocks[b] = block_of(r);
  s->blocks[b].next = at->head;
  at->head = b;
  if (same) slot_set_block(same, b);
  return true;
}

/* MALLOC row `r`, at a Ptr never freed, held last in its device's queue
 * while a later MALLOC may take its ID (its ID's slot `same` names it);
 * false past the room. */
static bool queue_unfreed(struct sw_leak_stream *s, const struct sw_leak_stream_row *r, struct slot *same) {
  int32_t b = block_new(s);
  if (b == NONE) return false;
  s->blocks[b] = block_of(r);
  s->blocks[b].at_unfreed_ptr = true;
  const uint32_t dev = r->dev;
  if (s->unfreed_tail[dev] == NONE) s->unfreed_head[dev] = b;
  else s->blocks[s->unfreed_tail[dev]].next = b;
  s->unfreed_tail[dev] = b;
  if (same) slot_set_block(same, b);
  return true;
}

/* MALLOC row `r`'s block, not yet cleared: pending at its Ptr (whose mix
 * is `ptr_hash`); at a Ptr never freed, held in its device's queue while a
 * later MALLOC may take its ID (`taken_later`), else a leak at once. Its
 * ID's slot `same`, if kept, names it. False past the room. */
static bool hold(struct sw_leak_stream *s, const struct sw_leak_stream_row *r, uint64_t ptr_hash, struct slot *same,
                 bool taken_later) {
  if (!row_at_unfreed_ptr(s, r)) return pend(s, r, ptr_hash, same);
  if (taken_later) return queue_unfreed(s, r, same);
  const struct block k = block_of(r);
  return settled(s, &k, false);
}

/* Device `dev`'s FREE at `ptr` (whose mix is `hash`) with `id`
 * remembered, its Ptr's largest FREE ID raised; false when memory is
 * short or past the room. */
static bool remember_free(struct sw_leak_stream *s, uint32_t dev, double ptr, uint64_t hash, double id) {
  if (!(id >= 0 && id <= MAX_FREE_ID && (double)(uint64_t)id == id)) return false;
  struct slot *at = slot_at(s, &s->frees, dev, ptr, hash);
  if (at && id > slot_max_free(at)) slot_set(at, (uint64_t)id + 1);
  return at != NULL;
}

/* A MALLOC with device `dev`'s `id` takes the ID from the block its
 * slot `same` names, while that is still the one made for it. */
static void take_id(struct sw_leak_stream *s, struct slot *same, uint32_t dev, double id) {
  const int32_t b = slot_block(same);
  /* One in its device's queue goes when it reaches the front. */
  if (made_for(s, b, dev, id)) {
    if (s->blocks[b].at_unfreed_ptr) s->blocks[b].alive = false;
    else unlink_block(s, b);
  }
  slot_set_block(same, NONE);
}

static bool replay_malloc(struct sw_leak_stream *s, const struct queued *q) {
  const struct sw_leak_stream_row *r = &q->row;
  const uint32_t dev = r->dev;
  const double id = r->id, ptr = r->ptr;
  /* leak_replay.c reports the first such row in the window, freed or not. */
  if (r->size != r->size) return false;
  if (!in_order(s, dev, id)) return false;
  if (s->freed && !settle_due(s, dev)) return false;
  /* IDs each once: none to take, none to keep. */
  const bool once = s->ids_once[dev];
  if (!mine_hash(s, q->ptr_hash)) {
    /* Another part's block, which takes the ID from any of this one. */
    struct slot *same = once ? NULL : slot_found(&s->ids, dev, id, q->id_hash);
    if (same) take_id(s, same, dev, id);
    return true;
  }
  struct slot *same = once ? NULL : slot_at(s, &s->ids, dev, id, q->id_hash);
  if (!once && !same) return false;
  if (same) take_id(s, same, dev, id);
  const struct slot *freed = slot_found(&s->frees, dev, ptr, q->ptr_hash);
  if (freed && slot_max_free(freed) > id) return true; /* a FREE after it in ID order came first */
  return hold(s, r, q->ptr_hash, same, !once);
}

static bool replay_free(struct sw_leak_stream *s, const struct queued *q) {
  const struct sw_leak_stream_row *r = &q->row;
  const uint32_t dev = r->dev;
  const double id = r->id, ptr = r->ptr;
  /* A FREE further back than the horizon is no error: every MALLOC it could
   * clear came before it (later ones are not that far back). Nor does one
   * far ahead move the bound: MALLOCs alone do. */
  if (dev >= MAX_DEVICES || id != id) return false;
  if (!mine_hash(s, q->ptr_hash)) return true; /* another part's Ptr: none of its blocks */
  if (!none_to_come(s, q->malloc_slot) && !remember_free(s, dev, ptr, q->ptr_hash, id)) return false;
  struct sw_leak_ptr *at = sw_leak_ptrs_find(&s->ptrs, dev, ptr, q->ptr_hash);
  if (!at) return true;
  /* Every pending block here came before it in the file: cleared when its
   * ID is not above this one. */
  for (int32_t *link = &at->head; *link != NONE;) {
    struct block *b = &s->blocks[*link];
    if (b->id > id) {
      link = &b->next;
      continue;
    }
    int32_t gone = *link;
    *link = b->next;
    block_gone(s, gone);
  }
  if (at->head == NONE) sw_leak_ptrs_remove(&s->ptrs, at);
  return true;
}

void sw_leak_stream_seen(struct sw_leak_stream *s, uint32_t dev, double max_malloc_id) {
  if (dev < MAX_DEVICES && max_malloc_id > s->max_id[dev]) s->max_id[dev] = max_malloc_id;
}

bool sw_leak_stream_remembers(const struct sw_leak_stream *s, uint32_t dev, double ptr, double id) {
  return dev < MAX_DEVICES && free_needed(s, dev, malloc_slot_of(ptr), id);
}

static bool pending_once(struct sw_leak_stream *s, const struct sw_leak_stream_row *r) {
  const uint32_t dev = r->dev;
  if (dev >= MAX_DEVICES) return false;
  if (!mine(s, dev, r->ptr)) return true;
  /* Its ID's slot only while a MALLOC still to come may take the ID:
   * one further back ends the replay (in_order). */
  const bool taken_later = id_may_come(s, dev, r->id);
  struct slot *same = taken_later ? slot_of(s, &s->ids, dev, r->id) : NULL;
  if (taken_later && !same) return false;
  return hold(s, r, sw_leak_mix(r->ptr, dev), same, taken_later);
}

bool sw_leak_stream_pending(struct sw_leak_stream *s, const struct sw_leak_stream_row *r) {
  bool ok;
  do ok = pending_once(s, r);
  while (!ok && room_made(s));
  return ok;
}

/* Blocks ahead of the one handed over whose Ptr's slot, and word of the
 * Ptrs freed, are fetched into the cache. */
#define HANDED_AHEAD 16u

bool sw_leak_stream_pending_all(struct sw_leak_stream *s, const struct sw_leak_stream_row *rows, uint64_t n) {
  /* The Ptrs' table grown once for them all (at most the room's): growing
   * it as they came, each of 1,100,000 blocks a miss on the way in, took
   * a 1.10 GB log's hand-over 280 ms. Memory short: it grows as it goes. */
  (void)sw_leak_ptrs_reserve(&s->ptrs, n < s->room ? n : s->room);
  for (uint64_t j = 0; j < n; j++) {
    if (j + HANDED_AHEAD < n) {
      const struct sw_leak_stream_row *next = &rows[j + HANDED_AHEAD];
      __builtin_prefetch(sw_leak_ptrs_first_probe(&s->ptrs, sw_leak_mix(next->ptr, next->dev)));
      if (s->freed) __builtin_prefetch(sw_leak_freed_at(s->freed, sw_leak_freed_key(next->ptr)));
    }
    if (!sw_leak_stream_pending(s, &rows[j])) return false;
  }
  return true;
}

bool sw_leak_stream_freed(struct sw_leak_stream *s, uint32_t dev, double ptr, double id) {
  if (dev >= MAX_DEVICES) return false;
  bool ok;
  const uint64_t hash = sw_leak_mix(ptr, dev);
  do ok = !free_needed(s, dev, malloc_slot_of(ptr), id) || !mine_hash(s, hash) || remember_free(s, dev, ptr, hash, id);
  while (!ok && room_made(s));
  return ok;
}

/* Waits a moment for the other thread: a yield (two vCPUs: not a spin),
 * and past YIELDS of them in a row a sleep, so that a side waiting on the
 * disk (a log not in the page cache) leaves its vCPU to the job beside it.
 * `waits`: this wait's count so far, reset by the caller on progress. */
#define YIELDS 64
static void wait_a_moment(unsigned *waits) {
  if (++*waits < YIELDS) {
    sched_yield();
    return;
  }
  struct timespec nap = {.tv_nsec = 50000};
  nanosleep(&nap, NULL);
}

bool sw_leak_stream_push(struct sw_leak_stream *s, const struct sw_leak_stream_row *row) {
  struct queue *q = &s->queue;
  unsigned waits = 0;
  while (q->pushed - q->tail_seen == QUEUE_ROWS) {
    atomic_store_explicit(&q->head, q->pushed, memory_order_release);
    if (atomic_load_explicit(&q->stopped, memory_order_relaxed)) return false;
    q->tail_seen = atomic_load_explicit(&q->tail, memory_order_acquire);
    if (q->pushed - q->tail_seen == QUEUE_ROWS) wait_a_moment(&waits);
  }
  q->rows[q->pushed++ & (QUEUE_ROWS - 1)] =
      (struct queued){.row = *row, .ptr_hash = sw_leak_mix(row->ptr, row->dev), .id_hash = sw_leak_mix(row->id, row->dev),
                      .malloc_slot = malloc_slot_of(row->ptr)};
  if (q->pushed % PUBLISH_EVERY == 0) {
    atomic_store_explicit(&q->head, q->pushed, memory_order_release);
    if (atomic_load_explicit(&q->stopped, memory_order_relaxed)) return false;
  }
  return true;
}

void sw_leak_stream_close(struct sw_leak_stream *s, bool complete) {
  struct queue *q = &s->queue;
  atomic_store_explicit(&q->head, q->pushed, memory_order_release);
  atomic_store_explicit(&q->closed, complete ? 1 : 2, memory_order_release);
}

/* Rows ahead of the one replayed whose slots are fetched into the cache.
 * Where many blocks are pending the Ptr table holds tens of MB, a row's
 * first probe missed the cache nearly every time, and the replay, not the
 * read, set the pace: a 1.08 GB log with 500,000 blocks pending across its
 * window took 1.29-1.51 s without, 1.01-1.40 with (5 runs each,
 * alternated). Where few are (the FREEs of a horizon of IDs alone, a
 * few MB) it makes no difference. 24, not 12: the block a FREE clears
 * (NEAR) is fetched once its Ptr's slot is there, and at 6 rows the slot
 * had often not come (the replay of a 1.10 GB log holding 1.1M blocks,
 * after the rows kept: 571-708 ms, median 692, against 597-810, median
 * 727, 5 runs each alternated). */
#define AHEAD 24u

/* Rows ahead of the one replayed whose first pending block a FREE clears
 * is fetched into the cache, once the Ptr's slot, fetched AHEAD rows
 * before, is there: where many blocks are pending, the block a FREE reads
 * had missed the cache too, and two thirds of the replay's time went on
 * that read (perf, a 1.02 GB log holding 500,000 blocks). */
#define NEAR (AHEAD / 2)

/* The first pending block of row `r`'s Ptr, a FREE's, where the first
 * probe of its Ptr finds it; NULL else. Fetched ahead in the loop itself:
 * GCC finds a function that only fetches free of side effects, and drops
 * its calls. */
static inline const struct block *first_block(const struct sw_leak_stream *s, const struct queued *r) {
  if (r->row.malloc_row) return NULL;
  const struct sw_leak_ptr *o = sw_leak_ptrs_first_probe(&s->ptrs, r->ptr_hash);
  return o->dev == r->row.dev && o->key == r->row.ptr && o->head != NONE ? &s->blocks[o->head] : NULL;
}

/* Where the first probe of a key whose mix is `hash` lands in `t`:
 * fetched ahead. */
static inline const struct slot *first_probe(const struct table *t, uint64_t hash) {
  return &t->slots[hash & t->mask];
}

bool sw_leak_stream_run(struct sw_leak_stream *s) {
  struct queue *q = &s->queue;
  uint64_t tail = 0;
  unsigned waits = 0;
  for (;;) {
    /* `closed` before `head`: the head read after it holds every row. */
    int closed = atomic_load_explicit(&q->closed, memory_order_acquire);
    uint64_t head = atomic_load_explicit(&q->head, memory_order_acquire);
    if (tail == head) {
      if (closed) return closed == 1;
      wait_a_moment(&waits);
      continue;
    }
    waits = 0;
    for (; tail < head; tail++) {
      if (tail + AHEAD < head) {
        const struct queued *next = &q->rows[(tail + AHEAD) & (QUEUE_ROWS - 1)];
        __builtin_prefetch(sw_leak_ptrs_first_probe(&s->ptrs, next->ptr_hash));
        __builtin_prefetch(first_probe(&s->frees, next->ptr_hash));
        if (next->row.malloc_row && next->row.dev < MAX_DEVICES && !s->ids_once[next->row.dev])
          __builtin_prefetch(first_probe(&s->ids, next->id_hash));
        if (next->row.malloc_row && s->freed)
          __builtin_prefetch(sw_leak_freed_at(s->freed, sw_leak_freed_key(next->row.ptr)));
        if (s->mallocs) __builtin_prefetch(&s->mallocs[next->malloc_slot]);
      }
      if (tail + NEAR < head) {
        const struct block *b = first_block(s, &q->rows[(tail + NEAR) & (QUEUE_ROWS - 1)]);
        if (b) __builtin_prefetch(b);
      }
      const struct queued *r = &q->rows[tail & (QUEUE_ROWS - 1)];
      /* Read: one fewer to come (once, however often it is replayed). One
       * that finds none to come was never counted, or another uncounted
       * took its count: a FREE at its Ptr may have been forgotten that it
       * needed, and the replay ends rather than take it for a leak. */
      bool ok = !(r->row.malloc_row && none_to_come(s, r->malloc_slot));
      if (ok && r->row.malloc_row && s->mallocs) sw_leak_mallocs_take(s->mallocs, r->malloc_slot);
      while (ok && !(r->row.malloc_row ? replay_malloc(s, r) : replay_free(s, r))) ok = room_made(s);
      if (!ok) {
        atomic_store_explicit(&q->stopped, true, memory_order_relaxed);
        /* Room for the reader, which may wait on a full ring to learn it. */
        atomic_store_explicit(&q->tail, head, memory_order_release);
        return false;
      }
      /* Room as it is made: a reader waiting on a full ring goes on. */
      if (tail % PUBLISH_EVERY == 0) atomic_store_explicit(&q->tail, tail, memory_order_release);
    }
    atomic_store_explicit(&q->tail, tail, memory_order_release);
  }
}

/* One pass of a radix sort, by the `width` bits (at most DIGIT_BITS) of
 * `key` at `shift`, from (key, at) into (key2, at2), stable; false, moving
 * nothing, where every key has the same digit there (an ID's high bytes,
 * mostly). */
#define DIGIT_BITS 12
static bool radix_pass(uint64_t n, const uint64_t *key, const uint32_t *at, uint64_t *key2, uint32_t *at2, int shift,
                       int width) {
  const uint64_t mask = (UINT64_C(1) << width) - 1;
  uint64_t start[(1u << DIGIT_BITS) + 1];
  memset(start, 0, (mask + 2) * sizeof *start);
  for (uint64_t i = 0; i < n; i++) start[((key[i] >> shift) & mask) + 1]++;
  for (uint64_t b = 1; b <= mask + 1; b++)
    if (start[b] == n) return false;
  for (uint64_t b = 1; b <= mask + 1; b++) start[b] += start[b - 1];
  for (uint64_t i = 0; i < n; i++) {
    const uint64_t to = start[(key[i] >> shift) & mask]++;
    key2[to] = key[i];
    at2[to] = at[i];
  }
  return true;
}

/* How many bits a value from 0 to `span` takes. */
static int bits_for(uint64_t span) { return span ? 64 - __builtin_clzll(span) : 0; }

/* The radix sort's keys where every ID is a whole number below 2^53 (those
 * msMemScope writes): the device's distance from the smallest device above
 * the ID's from the smallest ID, in one word (at most 8 + 53 bits);
 * false else. `bits`: how many low bits the keys take. */
_Static_assert(MAX_DEVICES <= 256, "a device in 8 bits beside a 53-bit ID");
static bool one_word_keys(const struct block *blocks, uint64_t n, uint64_t *key, int *bits) {
  uint64_t id_lo = UINT64_MAX, id_hi = 0;
  uint32_t dev_lo = UINT32_MAX, dev_hi = 0;
  for (uint64_t i = 0; i < n; i++) {
    const double id = blocks[i].id;
    if (!sw_id_whole(id)) return false;
    const uint64_t whole = (uint64_t)id;
    id_lo = whole < id_lo ? whole : id_lo;
    id_hi = whole > id_hi ? whole : id_hi;
    dev_lo = blocks[i].dev < dev_lo ? blocks[i].dev : dev_lo;
    dev_hi = blocks[i].dev > dev_hi ? blocks[i].dev : dev_hi;
  }
  const int id_bits = n ? bits_for(id_hi - id_lo) : 0;
  *bits = n ? id_bits + bits_for(dev_hi - dev_lo) : 0;
  for (uint64_t i = 0; i < n; i++)
    key[i] = (uint64_t)(blocks[i].dev - dev_lo) << id_bits | ((uint64_t)blocks[i].id - id_lo);
  return true;
}

/* The first `n` blocks' order by device, then ID (the order leak_replay.c
 * sorts rows into; no two pending blocks share both): their indices, in a
 * buffer to free; NULL when memory is short. A radix sort: qsort of the
 * 48-byte blocks took 130 ms of a 1 s replay that left 575,757 blocks
 * pending. Where the IDs are whole, one key of device and ID is sorted in
 * digits of up to 12 bits, as many as its bits take: 1,092,926 leaks whose
 * IDs span 7M took 98-105 ms in 8-bit digits of the ID's double (five of
 * them), and 50-70 ms in two digits of 12 bits. */
static uint32_t *device_then_id(const struct block *blocks, uint64_t n) {
  uint64_t *key = malloc(2 * n * sizeof *key + 1);
  uint32_t *at = malloc(2 * n * sizeof *at + 1);
  if (!key || !at) {
    free(key);
    free(at);
    return NULL;
  }
  uint64_t *key2 = key + n;
  uint32_t *at2 = at + n;
  for (uint64_t i = 0; i < n; i++) at[i] = (uint32_t)i;
  int bits = 0;
  const bool whole = one_word_keys(blocks, n, key, &bits);
  if (!whole)
    for (uint64_t i = 0; i < n; i++) key[i] = sw_leak_id_order(blocks[i].id);
  const int passes = whole ? (bits + DIGIT_BITS - 1) / DIGIT_BITS : 9;
  const int width = whole ? (passes ? (bits + passes - 1) / passes : 0) : 8;
  for (int pass = 0; pass < passes; pass++) {
    /* Else the device last, most significant: a pass of its own. */
    if (!whole && pass == 8)
      for (uint64_t i = 0; i < n; i++) key[i] = blocks[at[i]].dev;
    if (!radix_pass(n, key, at, key2, at2, !whole && pass == 8 ? 0 : width * pass, width)) continue;
    uint64_t *k = key;
    key = key2, key2 = k;
    uint32_t *a = at;
    at = at2, at2 = a;
  }
  /* The sorted indices may lie in either half of the buffer. */
  uint32_t *base = at < at2 ? at : at2;
  if (at != base) memmove(base, at, n * sizeof *at);
  free(key < key2 ? key : key2);
  return base;
}

/* v[0, n) rearranged so that its first k (k < n) are the k listed first
 * (a quickselect: the entries are distinct by device, ID and place). */
static void first_listed(struct block *v, int64_t n, int64_t k) {
  int64_t lo = 0, hi = n;
  while (hi - lo > 1) {
    const struct block pivot = v[lo + (hi - lo - 1) / 2];
    int64_t i = lo - 1, j = hi;
    for (;;) {
      do i++;
      while (listed_before(&v[i], &pivot));
      do j--;
      while (listed_before(&pivot, &v[j]));
      if (i >= j) break;
      const struct block t = v[i];
      v[i] = v[j];
      v[j] = t;
    }
    /* v[lo, j] come before v[j + 1, hi). */
    if (k < j + 1) hi = j + 1;
    else if (k > j + 1) lo = j + 1;
    else break;
  }
}

/* The listed leaks of this part's buckets, appended to the blocks as
 * blocks at Ptrs never freed, their lists freed; false when memory is
 * short. Of the 64 lists' leaks only the first max_listed of all can be
 * listed: the others are counted (sorting 640,000 of them with the blocks
 * took a replay of 7M leaks 70 ms). */
static bool listed_to_blocks(struct sw_leak_stream *s) {
  uint64_t more = 0;
  for (uint32_t j = 0; j < BUCKETS; j++) more += bucket_mine(s, j) ? s->listed[j].n : 0;
  const uint64_t need = s->n_blocks + more;
  if (more && need > s->cap_blocks && !pool_grown(s, need)) return false;
  for (uint32_t j = 0; j < BUCKETS; j++) {
    const struct listed_heap *l = &s->listed[j];
    for (uint64_t i = 0; bucket_mine(s, j) && i < l->n; i++) {
      s->blocks[s->n_blocks] = l->v[i];
      s->blocks[s->n_blocks].alive = s->blocks[s->n_blocks].at_unfreed_ptr = true;
      s->n_blocks++;
    }
    listed_free(&s->listed[j]);
  }
  if (more > s->max_listed) {
    struct block *from = s->blocks + s->n_blocks - more;
    first_listed(from, (int64_t)more, (int64_t)s->max_listed);
    for (uint64_t i = s->max_listed; i < more; i++) count_unlisted(s, bucket_of(&from[i]), &from[i]);
    s->n_blocks -= more - s->max_listed;
  }
  return true;
}

/* Leaks ahead of the one written whose block is fetched into the cache. */
#define SORTED_AHEAD 16u

uint64_t sw_leak_stream_leaks(struct sw_leak_stream *s, uint64_t cap, uint8_t *kind, uint32_t *device, double *id,
                              double *ptr, double *size, double *row_offset, uint32_t *line, uint64_t *odd_ids,
                              uint64_t *unlisted) {
  tables_free(s);
  if (!listed_to_blocks(s)) return UINT64_MAX;
  /* The leaks to the front; the replay is over. Those still queued at
   * unfreed Ptrs are among them: no MALLOC is left to take their IDs. */
  uint64_t n = 0;
  bool sorted = true;
  for (uint64_t i = 0; i < s->n_blocks; i++) {
    if (!s->blocks[i].alive) continue;
    s->blocks[n] = s->blocks[i];
    const struct block *p = &s->blocks[n - (n > 0)], *q = &s->blocks[n];
    sorted = sorted && (p->dev < q->dev || (p->dev == q->dev && p->id <= q->id));
    n++;
  }
  uint32_t *order = sorted ? NULL : device_then_id(s->blocks, n);
  if (!sorted && !order) return UINT64_MAX;
  uint64_t out = 0;
  for (uint64_t k = 0; k < n; k++) {
    /* In ID order the blocks lie all over the pool: each a miss. */
    if (order && k + SORTED_AHEAD < n) __builtin_prefetch(&s->blocks[order[k + SORTED_AHEAD]]);
    const struct block *b = &s->blocks[order ? order[k] : k];
    /* One at a Ptr never freed with max_listed leaks before it: counted. */
    if (b->at_unfreed_ptr && k >= s->max_listed) {
      count_unlisted(s, bucket_of(b), b);
      continue;
    }
    if (out == cap) {
      free(order);
      return UINT64_MAX;
    }
    kind[out] = 1;
    device[out] = b->dev;
    id[out] = b->id;
    ptr[out] = b->ptr;
    size[out] = b->size;
    row_offset[out] = b->offset;
    line[out] = b->line;
    *odd_ids += b->odd_id;
    out++;
  }
  free(order);
  unsigned __int128 bytes[MAX_DEVICES] = {0};
  uint64_t counts[MAX_DEVICES] = {0};
  for (uint32_t j = 0; s->unlisted && j < BUCKETS; j++) {
    for (uint32_t dev = 0; bucket_mine(s, j) && dev < MAX_DEVICES; dev++) {
      counts[dev] += s->unlisted[dev * BUCKETS + j].count;
      bytes[dev] += s->unlisted[dev * BUCKETS + j].bytes;
    }
  }
  for (uint32_t dev = 0; unlisted && dev < MAX_DEVICES; dev++) {
    unlisted[3 * dev] = counts[dev];
    unlisted[3 * dev + 1] = (uint64_t)bytes[dev];
    unlisted[3 * dev + 2] = (uint64_t)(bytes[dev] >> 64);
  }
  return out;
}
