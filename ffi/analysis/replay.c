/*
 * replay.c: one device's memory rows replayed into the allocator history
 * and end state memory_viz draws, rule for rule as
 * analysis/snapshot/allocator.ts (read its header for why each rule is
 * there): runtime allocations are segments, allocator blocks live in the
 * segment that contains them (or one of their own), a process without
 * blocks has each segment drawn as one block, every free is a
 * free_requested directly followed by a free_completed, and an allocation
 * over live memory frees that memory first.
 */
#define _GNU_SOURCE
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

struct seg {
    double addr, size;
    int32_t stack;
    bool whole, own;
    struct sw_addr_set blocks; /* live blocks' addresses */
};

struct blk {
    double size;
    int32_t stack;
    uint32_t seg;
};

struct hints {
    uint32_t live, blocks;
    uint32_t freed; /* the block a FREE row names, UINT32_MAX: none */
};

struct state {
    const struct sw_rows *rows;
    sw_entry_sink sink;
    void *ctx;
    struct seg *segs;
    uint32_t nsegs, segs_cap, *free_segs, nfree_segs;
    struct blk *blks;
    uint32_t nblks, blks_cap, *free_blks, nfree_blks;
    struct sw_addr_map seg_at, blk_at; /* address -> index */
    struct sw_addr_set live_segs; /* addresses of live segments that hold blocks */
    double widest;                /* the largest size entered in live_segs */
    /* The row's address and the hints sw_addr_set_prefetch gave for it
     * rows before: for its look-ups in live_segs, and in the blocks of
     * the segment the row before it touched (most blocks live in the
     * segment of the block before them). */
    double hint_v;
    struct hints hint;
    uint32_t recent_seg; /* UINT32_MAX: none */
    /* Where containing() found the row's address (hint_v) would go in
     * live_segs, while live_segs is as it was then: the new segment goes
     * there. */
    struct sw_addr_at place;
    bool place_ok;
    double freed_before_log, lost_frees;
};

/* An address's key in the tables. Addresses are whole numbers below 2^53
 * (memory_row.c address), so that the key is the address itself, and a
 * segment's list, which holds the addresses, agrees with the tables. */
#define KEY(a) ((uint64_t)(a))

/* Rows ahead of the replay whose look-ups are fetched (sw_row_in_order
 * fetches the rows themselves further ahead). */
#define AHEAD 8
/* The hints the look-ups ahead gave, by row (more than AHEAD). */
#define HINTS 16

static void emit(struct state *st, int action, double addr, double size, int32_t stack, double t) {
    st->sink(st->ctx, action, addr, size, stack, t, 0);
}

static uint32_t live_hint(const struct state *st, double v) {
    return v == st->hint_v ? st->hint.live : SW_NO_HINT;
}

/* For a look-up of `v` in the blocks of segment `si`, which the row
 * touches. A hint given for another set is as safe (sw_addr_set_prefetch). */
static uint32_t blocks_hint(struct state *st, uint32_t si, double v) {
    st->recent_seg = si;
    return v == st->hint_v ? st->hint.blocks : SW_NO_HINT;
}

/* live_segs changed: a place found in it before no longer holds. */
static void live_erase(struct state *st, double addr) {
    sw_addr_set_erase(&st->live_segs, addr, live_hint(st, addr));
    st->place_ok = false;
}

static void live_insert(struct state *st, double addr, uint32_t si) {
    struct sw_addr_at at = st->place_ok && addr == st->hint_v
        ? st->place
        : sw_addr_set_lower_near(&st->live_segs, addr, live_hint(st, addr));
    sw_addr_set_insert_at(&st->live_segs, at, addr, si);
    st->place_ok = false;
}

/* Live segments looked at, from the last to start at or below a block
 * back (allocator.ts WALK_BACK). */
#define WALK_BACK 64

/* The live segment holding [addr, addr + size), as allocator.ts finds it:
 * of those that reach addr, the one that starts last, if it holds all of
 * it (none is whole: those are not in live_segs). Segments do not overlap
 * but in a log that lost frees: there, one nested in another may end below
 * addr, and those that start before it are looked at, WALK_BACK at most. */
static int64_t containing(struct state *st, double addr, double size) {
    const struct sw_addr_set *set = &st->live_segs;
    struct sw_addr_at at = sw_addr_set_lower_near(set, addr, live_hint(st, addr));
    st->place = at;
    st->place_ok = addr == st->hint_v;
    if (!(sw_addr_set_valid(set, at) && sw_addr_set_get(set, at) == addr) && !sw_addr_set_prev(set, &at))
        return -1;
    for (int k = 0; k < WALK_BACK; k++) {
        /* None that starts this far below addr reaches it. */
        if (sw_addr_set_get(set, at) + st->widest <= addr) return -1;
        uint32_t si = sw_addr_set_value(set, at);
        const struct seg *s = &st->segs[si];
        if (addr < s->addr + s->size) return addr + size <= s->addr + s->size ? (int64_t)si : -1;
        if (!sw_addr_set_prev(set, &at)) return -1;
    }
    return -1;
}

static uint32_t new_seg(struct state *st, double addr, double size, int32_t stack, bool whole,
                        bool own) {
    uint32_t i;
    if (st->nfree_segs) {
        i = st->free_segs[--st->nfree_segs];
    } else {
        if (st->nsegs == st->segs_cap) {
            st->segs_cap = st->segs_cap ? st->segs_cap * 2 : 64;
            st->segs = realloc(st->segs, st->segs_cap * sizeof *st->segs);
            st->free_segs = realloc(st->free_segs, st->segs_cap * sizeof *st->free_segs);
            if (!st->segs || !st->free_segs) abort();
        }
        i = st->nsegs++;
        memset(&st->segs[i].blocks, 0, sizeof st->segs[i].blocks);
    }
    struct seg *s = &st->segs[i];
    s->addr = addr;
    s->size = size;
    s->stack = stack;
    s->whole = whole;
    s->own = own;
    sw_addr_set_clear(&s->blocks);
    return i;
}

/* Block b at addr freed, but for its place in its segment's list. */
static void release_block(struct state *st, double addr, uint32_t b, int32_t stack, double t) {
    const struct blk *k = &st->blks[b];
    emit(st, A_FREE_REQ, addr, k->size, stack, t);
    emit(st, A_FREE_DONE, addr, k->size, stack, t);
    sw_addr_del(&st->blk_at, KEY(addr));
    st->free_blks[st->nfree_blks++] = b;
}

static void free_block(struct state *st, double addr, uint32_t b, int32_t stack, double t) {
    release_block(st, addr, b, stack, t);
    uint32_t si = st->blks[b].seg;
    sw_addr_set_erase(&st->segs[si].blocks, addr, blocks_hint(st, si, addr));
}

static void free_segment(struct state *st, uint32_t si, int32_t stack, double t) {
    struct seg *s = &st->segs[si];
    if (s->whole) {
        emit(st, A_FREE_REQ, s->addr, s->size, stack, t);
        emit(st, A_FREE_DONE, s->addr, s->size, stack, t);
    }
    /* Lowest first, then the set emptied at once. */
    for (struct sw_addr_at at = {0, 0}; sw_addr_set_valid(&s->blocks, at); sw_addr_set_next(&s->blocks, &at)) {
        double addr = sw_addr_set_get(&s->blocks, at);
        release_block(st, addr, sw_addr_set_value(&s->blocks, at), stack, t);
    }
    sw_addr_set_clear(&s->blocks);
    emit(st, A_SEG_FREE, s->addr, s->size, stack, t);
    sw_addr_del(&st->seg_at, KEY(s->addr));
    if (!s->whole) live_erase(st, s->addr);
    st->free_segs[st->nfree_segs++] = si;
}

static void alloc_segment(struct state *st, uint32_t si, double t) {
    struct seg *s = &st->segs[si];
    uint32_t *old = sw_addr_get(&st->seg_at, KEY(s->addr));
    if (old) {
        st->lost_frees++;
        uint32_t o = *old;
        free_segment(st, o, st->segs[o].stack, t);
        s = &st->segs[si];
    }
    sw_addr_put(&st->seg_at, KEY(s->addr), si);
    if (!s->whole) {
        live_insert(st, s->addr, si);
        if (s->size > st->widest) st->widest = s->size;
    }
    emit(st, A_SEG_ALLOC, s->addr, s->size, s->stack, t);
    /* Its one block is the segment itself: not in blk_at, no list. */
    if (s->whole) emit(st, A_ALLOC, s->addr, s->size, s->stack, t);
}

/* Block at `addr` into segment `si`, at `place` in its set (where
 * sw_addr_set_lower puts `addr`). */
static void add_block(struct state *st, uint32_t si, double addr, double size, int32_t stack,
                      struct sw_addr_at place) {
    uint32_t b;
    if (st->nfree_blks) {
        b = st->free_blks[--st->nfree_blks];
    } else {
        if (st->nblks == st->blks_cap) {
            st->blks_cap = st->blks_cap ? st->blks_cap * 2 : 256;
            st->blks = realloc(st->blks, st->blks_cap * sizeof *st->blks);
            st->free_blks = realloc(st->free_blks, st->blks_cap * sizeof *st->free_blks);
            if (!st->blks || !st->free_blks) abort();
        }
        b = st->nblks++;
    }
    st->blks[b] = (struct blk){size, stack, si};
    sw_addr_put(&st->blk_at, KEY(addr), b);
    sw_addr_set_insert_at(&st->segs[si].blocks, place, addr, b);
}

static void block_alloc(struct state *st, double addr, double size, int32_t stack, double t) {
    uint32_t *old = sw_addr_get(&st->blk_at, KEY(addr));
    if (old && !st->segs[st->blks[*old].seg].whole) {
        uint32_t o = *old, os = st->blks[o].seg;
        int32_t ostack = st->blks[o].stack;
        st->lost_frees++;
        free_block(st, addr, o, ostack, t);
        if (st->segs[os].own && st->segs[os].blocks.n == 0) free_segment(st, os, ostack, t);
    }
    int64_t seg = containing(st, addr, size);
    struct sw_addr_at place = {0, 0}; /* an own segment's set is empty */
    if (seg >= 0) {
        const struct sw_addr_set *set = &st->segs[seg].blocks;
        struct sw_addr_at at = sw_addr_set_lower_near(set, addr, blocks_hint(st, (uint32_t)seg, addr));
        struct sw_addr_at before = at;
        place = at;
        if (sw_addr_set_prev(set, &before) &&
            sw_addr_set_get(set, before) + st->blks[sw_addr_set_value(set, before)].size > addr)
            at = before;
        /* Each free takes its address out of the set: the next is looked
         * up again (a lost free is rare), and the block's place once they
         * are done. */
        bool freed = false;
        while (sw_addr_set_valid(set, at) && sw_addr_set_get(set, at) < addr + size) {
            double over = sw_addr_set_get(set, at);
            uint32_t b = sw_addr_set_value(set, at);
            st->lost_frees++;
            free_block(st, over, b, st->blks[b].stack, t);
            at = sw_addr_set_lower(set, over);
            freed = true;
        }
        if (freed) place = sw_addr_set_lower(set, addr);
    } else {
        seg = new_seg(st, addr, size, stack, false, true);
        alloc_segment(st, (uint32_t)seg, t);
    }
    add_block(st, (uint32_t)seg, addr, size, stack, place);
    emit(st, A_ALLOC, addr, size, stack, t);
}

static void block_free(struct state *st, double addr, double size, int32_t stack, double t) {
    uint32_t *found = sw_addr_get(&st->blk_at, KEY(addr));
    if (found && !st->segs[st->blks[*found].seg].whole) {
        uint32_t si = st->blks[*found].seg;
        free_block(st, addr, *found, stack, t);
        if (st->segs[si].own && st->segs[si].blocks.n == 0) free_segment(st, si, stack, t);
    } else if (size > 0) {
        st->freed_before_log++;
        emit(st, A_FREE_REQ, addr, size, stack, t);
        emit(st, A_FREE_DONE, addr, size, stack, t);
        if (containing(st, addr, size) < 0) emit(st, A_SEG_FREE, addr, size, stack, t);
    }
}

/* Whether the segment the rows touch holds blocks enough that a look-up
 * in them waits for memory: the chunks of a few (a segment of its own)
 * were not fetched, and reading where they lie would wait instead. */
static bool many_blocks(const struct state *st) {
    return st->recent_seg < st->nsegs && st->segs[st->recent_seg].blocks.nchunks > 1;
}

/* A free reads one after the other, each at a random place, its block's
 * entry, its segment's, where that segment's chunks lie, and the chunk
 * (a segment of its own has one): each is fetched a stage nearer, once
 * the read before it is in, the block found at the first stage kept for
 * the others (in `freed`, by row). On a log of 50,000 blocks in segments
 * of their own, the first two were four fifths of the replay's own time
 * (perf); fetching the last two too took its replay from 281 to 219 ms.
 * Rows ahead, by stage: */
static const size_t FREE_AHEAD[] = {6, 4, 2, 1};
#define FREE_STAGES (sizeof FREE_AHEAD / sizeof *FREE_AHEAD)

static void prefetch_freed(const struct state *st, const struct sw_row *r, size_t stage,
                           uint32_t *freed) {
    if (stage == 0) {
        const uint32_t *b =
            sw_row_kind(r) == K_BLK_FREE ? sw_addr_get(&st->blk_at, KEY(r->addr)) : NULL;
        *freed = b ? *b : UINT32_MAX;
        if (b) __builtin_prefetch(&st->blks[*b]);
        return;
    }
    /* A block freed or taken again since is only a fetch gone to waste. */
    if (*freed == UINT32_MAX) return;
    const struct seg *s = &st->segs[st->blks[*freed].seg];
    if (stage == 1) __builtin_prefetch(s);
    else if (s->blocks.nchunks == 1 && stage == 2) __builtin_prefetch(s->blocks.chunks);
    else if (s->blocks.nchunks == 1) __builtin_prefetch(s->blocks.chunks[0]);
}

/* Rows ahead at which an allocation in a segment of many blocks looks up
 * where it goes (that set's addresses fetched AHEAD rows before) to fetch
 * the entry of the block below it, whose end it will read: in one segment
 * of 50,000 blocks, half the replay's own time went waiting for that. */
#define ALLOC_AHEAD 3

static void prefetch_below(const struct state *st, const struct sw_row *r, uint32_t blocks_hint) {
    if (sw_row_kind(r) != K_BLK_ALLOC || !many_blocks(st)) return;
    const struct sw_addr_set *set = &st->segs[st->recent_seg].blocks;
    struct sw_addr_at at = sw_addr_set_lower_near(set, r->addr, blocks_hint);
    if (sw_addr_set_prev(set, &at)) __builtin_prefetch(&st->blks[sw_addr_set_value(set, at)]);
}

static int by_address(const void *x, const void *y, void *segs) {
    double a = ((struct seg *)segs)[*(const uint32_t *)x].addr;
    double b = ((struct seg *)segs)[*(const uint32_t *)y].addr;
    return a < b ? -1 : a > b;
}

static void push_block(struct sw_replayed *out, size_t *cap, double address, double size,
                       int32_t stack, bool active) {
    if (out->nblocks == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        out->blocks = realloc(out->blocks, *cap * sizeof *out->blocks);
        if (!out->blocks) abort();
    }
    out->blocks[out->nblocks++] = (struct sw_end_block){address, size, stack, active};
}

/* Live segments by address, each tiled by its blocks and free space. */
static void end_state(struct state *st, struct sw_replayed *out) {
    size_t n = st->seg_at.n, k = 0, cap = 0;
    uint32_t *live = malloc((n + 1) * sizeof *live);
    if (!live) abort();
    for (size_t i = 0; i < st->seg_at.cap; i++)
        if (st->seg_at.slots[i].used) live[k++] = st->seg_at.slots[i].val;
    qsort_r(live, n, sizeof *live, by_address, st->segs);
    out->segs = malloc((n + 1) * sizeof *out->segs);
    if (!out->segs) abort();
    out->nsegs = n;
    for (size_t i = 0; i < n; i++) {
        const struct seg *s = &st->segs[live[i]];
        struct sw_end_segment *e = &out->segs[i];
        e->address = s->addr;
        e->size = s->size;
        e->stack = s->stack;
        e->first = out->nblocks;
        if (s->whole) {
            push_block(out, &cap, s->addr, s->size, s->stack, true);
        } else {
            double at = s->addr, end = s->addr + s->size;
            for (struct sw_addr_at pos = {0, 0}; sw_addr_set_valid(&s->blocks, pos); sw_addr_set_next(&s->blocks, &pos)) {
                double addr = sw_addr_set_get(&s->blocks, pos);
                const struct blk *b = &st->blks[sw_addr_set_value(&s->blocks, pos)];
                /* Overlapping blocks (a log that lost a free) cannot both
                 * be drawn: the later one is cut to what is left. */
                double from = addr > at ? addr : at;
                double to = addr + b->size < end ? addr + b->size : end;
                if (to <= from) continue;
                if (from > at) push_block(out, &cap, at, from - at, 0, false);
                push_block(out, &cap, from, to - from, b->stack, true);
                at = to;
            }
            if (at < end) push_block(out, &cap, at, end - at, 0, false);
        }
        e->count = out->nblocks - e->first;
    }
    free(live);
}

void sw_replay_device(const struct sw_rows *rows, const uint32_t *order, size_t n, int32_t device,
                      sw_entry_sink sink, void *ctx, struct sw_replayed *out) {
    struct state st = {.rows = rows, .sink = sink, .ctx = ctx};
    st.recent_seg = UINT32_MAX;
    struct hints hints[HINTS];
    for (size_t i = 0; i < HINTS; i++) hints[i] = (struct hints){SW_NO_HINT, SW_NO_HINT, UINT32_MAX};
    sw_addr_init(&st.seg_at);
    sw_addr_init(&st.blk_at);
    for (size_t k = 0; k < n; k++) {
        const struct sw_row *r = sw_row_in_order(rows, order, k, n);
        /* What the row eight on will look up, fetched now: at random
         * addresses each look-up waited for memory (a log holding 50,000
         * blocks in segments of their own: 1.1 s, 0.55 with this). */
        if (k + AHEAD < n) {
            const double ahead = sw_row_at(rows, order[k + AHEAD])->addr;
            sw_addr_prefetch(&st.blk_at, KEY(ahead));
            sw_addr_prefetch(&st.seg_at, KEY(ahead));
            struct hints *h = &hints[(k + AHEAD) % HINTS];
            h->live = sw_addr_set_prefetch(&st.live_segs, ahead);
            h->blocks = many_blocks(&st) ? sw_addr_set_prefetch(&st.segs[st.recent_seg].blocks, ahead)
                                         : SW_NO_HINT;
        }
        for (size_t stage = 0; stage < FREE_STAGES; stage++) {
            const size_t j = k + FREE_AHEAD[stage];
            if (j < n) prefetch_freed(&st, sw_row_at(rows, order[j]), stage, &hints[j % HINTS].freed);
        }
        if (k + ALLOC_AHEAD < n)
            prefetch_below(&st, sw_row_at(rows, order[k + ALLOC_AHEAD]),
                           hints[(k + ALLOC_AHEAD) % HINTS].blocks);
        if (sw_row_device(r) != device) continue;
        double addr = r->addr, size = r->size, t = r->t;
        int32_t stack = r->stack;
        st.hint_v = addr;
        st.hint = hints[k % HINTS];
        st.place_ok = false;
        switch (sw_row_kind(r)) {
        case K_SEG_ALLOC: {
            bool whole = !sw_rows_block_level(rows, r->pid, device);
            alloc_segment(&st, new_seg(&st, addr, size, stack, whole, false), t);
            break;
        }
        case K_SEG_FREE: {
            uint32_t *s = sw_addr_get(&st.seg_at, KEY(addr));
            if (s) {
                free_segment(&st, *s, stack, t);
            } else if (size > 0) {
                st.freed_before_log++;
                /* Drawn as allocated before the trace began: a runtime
                 * allocation of a process without blocks was in use, so
                 * its block goes too. */
                if (!sw_rows_block_level(rows, r->pid, device)) {
                    emit(&st, A_FREE_REQ, addr, size, stack, t);
                    emit(&st, A_FREE_DONE, addr, size, stack, t);
                }
                emit(&st, A_SEG_FREE, addr, size, stack, t);
            }
            break;
        }
        case K_BLK_ALLOC: block_alloc(&st, addr, size, stack, t); break;
        case K_BLK_FREE: block_free(&st, addr, size, stack, t); break;
        case K_OOM: sink(ctx, A_OOM, 0, size, stack, t, addr); break;
        }
    }
    memset(out, 0, sizeof *out);
    end_state(&st, out);
    out->freed_before_log = st.freed_before_log;
    out->lost_frees = st.lost_frees;
    for (uint32_t i = 0; i < st.nsegs; i++) sw_addr_set_free(&st.segs[i].blocks);
    free(st.segs);
    free(st.free_segs);
    free(st.blks);
    free(st.free_blks);
    sw_addr_set_free(&st.live_segs);
    sw_addr_free(&st.seg_at);
    sw_addr_free(&st.blk_at);
}

void sw_replayed_free(struct sw_replayed *r) {
    free(r->segs);
    free(r->blocks);
    memset(r, 0, sizeof *r);
}
