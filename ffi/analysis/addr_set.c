/*
 * addr_set.c: a segment's live block addresses in ascending order. One
 * sorted array made each insert and free move half the list: a segment
 * holding 50,000 live blocks (expandable segments: one segment per stream
 * holds every block) took 5.7 s to convert where 5,000 took 0.7. The
 * addresses lie in sorted chunks of at most CHUNK_MAX, found by a search
 * over the chunks' last addresses, so a change moves one chunk's rest. A
 * segment with few blocks (most: one of its own) keeps one small chunk, as
 * the single array was. The chunks' last addresses lie in an array of
 * their own, so that the search over them reads no chunk (reading each
 * chunk's last address took a sixth of a conversion's replay) and half
 * the cache lines they took beside the chunks' pointers. A look-up given
 * the chunk an earlier one found (a hint) checks it against the last
 * addresses beside it instead of searching them all.
 */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

/* 64 addresses, 512 bytes: a look-up reads few cache lines of one, and
 * the replay fetches a chunk ahead whole (sw_addr_set_prefetch). */
#define CHUNK_MAX 64u

/* An address and its value. */
#define ENTRY_BYTES (sizeof(double) + sizeof(uint32_t))

static struct sw_addr_chunk *chunk_new(uint32_t cap) {
    struct sw_addr_chunk *c = malloc(sizeof *c + cap * ENTRY_BYTES);
    if (!c) abort();
    c->n = 0;
    c->cap = cap;
    return c;
}

void sw_addr_set_free(struct sw_addr_set *s) {
    for (uint32_t k = 0; k < s->nchunks; k++) free(s->chunks[k]);
    free(s->chunks);
    free(s->lasts);
    memset(s, 0, sizeof *s);
}

void sw_addr_set_clear(struct sw_addr_set *s) {
    /* The first chunk's room stays for the segment's next life. */
    for (uint32_t k = 1; k < s->nchunks; k++) free(s->chunks[k]);
    if (s->nchunks) {
        s->chunks[0]->n = 0;
        s->nchunks = 1;
    }
    s->n = 0;
}

/* Searches without a branch on the values: over addresses that come at
 * random, each step's branch was a coin toss the CPU lost half the time. */

/* The first chunk whose last address is `v` or more, else the last one
 * (the set holds at least one chunk). */
static uint32_t chunk_for(const struct sw_addr_set *s, double v) {
    /* Most sets (a segment of its own) have one chunk: their last
     * addresses, a small allocation of their own, are not read. */
    if (s->nchunks == 1) return 0;
    const double *base = s->lasts;
    for (uint32_t n = s->nchunks; n > 1;) {
        uint32_t half = n / 2;
        base = base[half] < v ? base + half : base;
        n -= half;
    }
    uint32_t k = (uint32_t)(base - s->lasts) + (*base < v);
    return k < s->nchunks ? k : s->nchunks - 1;
}

/* The first index of chunk `c` (not empty) whose address is `v` or more. */
static uint32_t lower_in(const struct sw_addr_chunk *c, double v) {
    const double *base = c->a;
    for (uint32_t n = c->n; n > 1;) {
        uint32_t half = n / 2;
        base = base[half] < v ? base + half : base;
        n -= half;
    }
    return (uint32_t)(base - c->a) + (*base < v);
}

uint32_t sw_addr_set_prefetch(const struct sw_addr_set *s, double v) {
    if (!s->n) return SW_NO_HINT;
    uint32_t k = chunk_for(s, v);
    /* Its addresses, without reading its count (that read waited for the
     * very line fetched): a set of several chunks has them CHUNK_MAX long. */
    const char *c = (const char *)s->chunks[k];
    size_t bytes = sizeof(struct sw_addr_chunk) + (s->nchunks > 1 ? CHUNK_MAX : s->n) * sizeof(double);
    for (size_t at = 0; at < bytes; at += 64) __builtin_prefetch(c + at);
    return k;
}

/* chunk_for, where `hint` (a chunk chunk_for gave for `v`, the set
 * changed since or not) saves the search whenever it still holds: the
 * chunk before it ends below `v`, and it ends at `v` or past it, or is the
 * last. */
static uint32_t chunk_near(const struct sw_addr_set *s, double v, uint32_t hint) {
    if (hint < s->nchunks && (hint == 0 || s->lasts[hint - 1] < v) &&
        (hint == s->nchunks - 1 || s->lasts[hint] >= v))
        return hint;
    return chunk_for(s, v);
}

/* Room for one more chunk pointer after chunk `k`, the chunk put there. */
static void chunk_insert(struct sw_addr_set *s, uint32_t k, struct sw_addr_chunk *c) {
    if (s->nchunks == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 4;
        s->chunks = realloc(s->chunks, s->cap * sizeof *s->chunks);
        s->lasts = realloc(s->lasts, s->cap * sizeof *s->lasts);
        if (!s->chunks || !s->lasts) abort();
    }
    memmove(s->chunks + k + 1, s->chunks + k, (s->nchunks - k) * sizeof *s->chunks);
    memmove(s->lasts + k + 1, s->lasts + k, (s->nchunks - k) * sizeof *s->lasts);
    s->chunks[k] = c;
    s->lasts[k] = c->n ? c->a[c->n - 1] : 0;
    s->nchunks++;
}

void sw_addr_set_insert_at(struct sw_addr_set *s, struct sw_addr_at at, double v, uint32_t value) {
    if (!s->nchunks) chunk_insert(s, 0, chunk_new(4));
    /* The end of the set is the end of its last chunk. */
    uint32_t k = at.c < s->nchunks ? at.c : s->nchunks - 1;
    struct sw_addr_chunk *c = s->chunks[k];
    uint32_t i = at.c < s->nchunks ? at.i : c->n;
    if (c->n == c->cap && c->cap < CHUNK_MAX) {
        c = realloc(c, sizeof *c + 2 * c->cap * ENTRY_BYTES);
        if (!c) abort();
        /* The values move up past the addresses' new room. */
        memmove(c->a + 2 * c->cap, c->a + c->cap, c->n * sizeof(uint32_t));
        c->cap *= 2;
        s->chunks[k] = c;
    } else if (c->n == c->cap) {
        /* Full: its upper half becomes a chunk of its own. */
        struct sw_addr_chunk *upper = chunk_new(CHUNK_MAX);
        upper->n = c->n / 2;
        c->n -= upper->n;
        memcpy(upper->a, c->a + c->n, upper->n * sizeof *c->a);
        memcpy(sw_addr_chunk_values(upper), sw_addr_chunk_values(c) + c->n, upper->n * sizeof(uint32_t));
        chunk_insert(s, k + 1, upper);
        s->lasts[k] = c->a[c->n - 1];
        if (i > c->n) {
            i -= c->n;
            c = s->chunks[++k];
        }
    }
    uint32_t *values = sw_addr_chunk_values(c);
    /* A place past the chunk's end would leave a gap of stale addresses. */
    if (i > c->n) abort();
    /* Most sets hold one block (a segment of its own): nothing moves. */
    if (i < c->n) {
        memmove(c->a + i + 1, c->a + i, (c->n - i) * sizeof *c->a);
        memmove(values + i + 1, values + i, (c->n - i) * sizeof *values);
    }
    c->a[i] = v;
    values[i] = value;
    c->n++;
    s->lasts[k] = c->a[c->n - 1];
    s->n++;
}

struct sw_addr_at sw_addr_set_lower(const struct sw_addr_set *s, double v) {
    return sw_addr_set_lower_near(s, v, SW_NO_HINT);
}

struct sw_addr_at sw_addr_set_lower_near(const struct sw_addr_set *s, double v, uint32_t hint) {
    if (!s->n) return (struct sw_addr_at){0, 0};
    uint32_t k = chunk_near(s, v, hint);
    struct sw_addr_at at = {k, lower_in(s->chunks[k], v)};
    /* Past the last chunk's end: the end of the set. */
    if (at.i == s->chunks[k]->n) at = (struct sw_addr_at){s->nchunks, 0};
    return at;
}

bool sw_addr_set_prev(const struct sw_addr_set *s, struct sw_addr_at *at) {
    if (at->c < s->nchunks && at->i > 0) {
        at->i--;
        return true;
    }
    if (at->c == 0 || !s->n) return false;
    at->c--;
    at->i = s->chunks[at->c]->n - 1;
    return true;
}

void sw_addr_set_erase(struct sw_addr_set *s, double v, uint32_t hint) {
    struct sw_addr_at at = sw_addr_set_lower_near(s, v, hint);
    if (!sw_addr_set_valid(s, at) || sw_addr_set_get(s, at) != v) return;
    struct sw_addr_chunk *c = s->chunks[at.c];
    uint32_t *values = sw_addr_chunk_values(c);
    if (at.i + 1 < c->n) {
        memmove(c->a + at.i, c->a + at.i + 1, (c->n - at.i - 1) * sizeof *c->a);
        memmove(values + at.i, values + at.i + 1, (c->n - at.i - 1) * sizeof *values);
    }
    c->n--;
    s->n--;
    if (c->n) s->lasts[at.c] = c->a[c->n - 1];
    /* An empty chunk goes, unless it is the only one (kept for reuse). */
    if (!c->n && s->nchunks > 1) {
        free(c);
        memmove(s->chunks + at.c, s->chunks + at.c + 1, (s->nchunks - at.c - 1) * sizeof *s->chunks);
        memmove(s->lasts + at.c, s->lasts + at.c + 1, (s->nchunks - at.c - 1) * sizeof *s->lasts);
        s->nchunks--;
    }
}
