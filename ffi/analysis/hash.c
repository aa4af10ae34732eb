/*
 * hash.c: the two hash tables the converter needs. Keys are a pair of
 * 64-bit words (a pid and an address, a device and an address) or byte
 * strings (stacks, frame texts, memoized pickle strings).
 */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

static inline uint64_t mix(uint64_t a, uint64_t b) {
    uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull + (a << 6) + (a >> 2));
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    return h;
}

static void map_alloc(struct sw_map *m, size_t cap) {
    m->cap = cap;
    m->n = 0;
    m->keys = malloc(cap * 2 * sizeof *m->keys);
    m->vals = malloc(cap * sizeof *m->vals);
    m->used = calloc(cap, 1);
    if (!m->keys || !m->vals || !m->used) abort();
}

void sw_map_init(struct sw_map *m, size_t hint) {
    size_t cap = 16;
    while (cap < hint * 2) cap *= 2;
    map_alloc(m, cap);
}

void sw_map_free(struct sw_map *m) {
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

void sw_map_clear(struct sw_map *m) {
    memset(m->used, 0, m->cap);
    m->n = 0;
}

static size_t find(const struct sw_map *m, uint64_t a, uint64_t b, bool *hit) {
    size_t mask = m->cap - 1, i = mix(a, b) & mask;
    while (m->used[i]) {
        if (m->keys[2 * i] == a && m->keys[2 * i + 1] == b) {
            *hit = true;
            return i;
        }
        i = (i + 1) & mask;
    }
    *hit = false;
    return i;
}

uint32_t *sw_map_get(const struct sw_map *m, uint64_t a, uint64_t b) {
    bool hit;
    size_t i = find(m, a, b, &hit);
    return hit ? &m->vals[i] : NULL;
}

static void grow(struct sw_map *m) {
    struct sw_map old = *m;
    map_alloc(m, old.cap * 2);
    for (size_t i = 0; i < old.cap; i++)
        if (old.used[i]) sw_map_put(m, old.keys[2 * i], old.keys[2 * i + 1], old.vals[i]);
    sw_map_free(&old);
}

bool sw_map_put(struct sw_map *m, uint64_t a, uint64_t b, uint32_t v) {
    bool hit;
    size_t i = find(m, a, b, &hit);
    if (hit) {
        m->vals[i] = v;
        return false;
    }
    if ((m->n + 1) * 4 > m->cap * 3) {
        grow(m);
        i = find(m, a, b, &hit);
    }
    m->used[i] = 1;
    m->keys[2 * i] = a;
    m->keys[2 * i + 1] = b;
    m->vals[i] = v;
    m->n++;
    return true;
}

bool sw_map_del(struct sw_map *m, uint64_t a, uint64_t b) {
    bool hit;
    size_t i = find(m, a, b, &hit);
    if (!hit) return false;
    size_t mask = m->cap - 1;
    /* Shift later members of the cluster back into the hole. */
    size_t j = i;
    for (;;) {
        m->used[i] = 0;
        for (;;) {
            j = (j + 1) & mask;
            if (!m->used[j]) {
                m->n--;
                return true;
            }
            size_t home = mix(m->keys[2 * j], m->keys[2 * j + 1]) & mask;
            /* j may move to i when its home is not in (i, j]. */
            if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) break;
        }
        m->keys[2 * i] = m->keys[2 * j];
        m->keys[2 * i + 1] = m->keys[2 * j + 1];
        m->vals[i] = m->vals[j];
        m->used[i] = 1;
        i = j;
    }
}

/* ---- byte strings ---- */

/* XXH3 (the system's, inlined): call stacks make keys of a kilobyte, which
 * a word-at-a-time chain of multiplies hashed at a tenth of the read. */
static uint64_t hash_bytes(const uint8_t *s, size_t n) { return XXH3_64bits(s, n); }

void sw_strtab_init(struct sw_strtab *t) {
    memset(t, 0, sizeof *t);
    t->nslots = 64;
    t->slots = calloc(t->nslots, sizeof *t->slots);
    if (!t->slots) abort();
}

void sw_strtab_free(struct sw_strtab *t) {
    sw_bytes_free(&t->text);
    free(t->off);
    free(t->len);
    free(t->hash);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static size_t slot_of(const struct sw_strtab *t, const uint8_t *s, size_t n, uint64_t h,
                      bool *hit) {
    size_t mask = t->nslots - 1, i = h & mask;
    while (t->slots[i]) {
        uint32_t id = t->slots[i] - 1;
        if (t->hash[id] == h && t->len[id] == n && memcmp(t->text.p + t->off[id], s, n) == 0) {
            *hit = true;
            return i;
        }
        i = (i + 1) & mask;
    }
    *hit = false;
    return i;
}

int64_t sw_strtab_find(const struct sw_strtab *t, const uint8_t *s, size_t n) {
    bool hit;
    size_t i = slot_of(t, s, n, hash_bytes(s, n), &hit);
    return hit ? (int64_t)t->slots[i] - 1 : -1;
}

uint32_t sw_strtab_intern(struct sw_strtab *t, const uint8_t *s, size_t n, bool *fresh) {
    uint64_t h = hash_bytes(s, n);
    bool hit;
    size_t i = slot_of(t, s, n, h, &hit);
    if (hit) {
        if (fresh) *fresh = false;
        return t->slots[i] - 1;
    }
    if (t->count == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->off = realloc(t->off, t->cap * sizeof *t->off);
        t->len = realloc(t->len, t->cap * sizeof *t->len);
        t->hash = realloc(t->hash, t->cap * sizeof *t->hash);
        if (!t->off || !t->len || !t->hash) abort();
    }
    uint32_t id = (uint32_t)t->count++;
    t->off[id] = t->text.n;
    t->len[id] = (uint32_t)n;
    t->hash[id] = h;
    sw_bytes_put(&t->text, s, n);
    if (t->count * 2 > t->nslots) {
        free(t->slots);
        t->nslots *= 2;
        t->slots = calloc(t->nslots, sizeof *t->slots);
        if (!t->slots) abort();
        for (uint32_t k = 0; k < t->count; k++) {
            size_t mask = t->nslots - 1, j = t->hash[k] & mask;
            while (t->slots[j]) j = (j + 1) & mask;
            t->slots[j] = k + 1;
        }
    } else {
        t->slots[i] = id + 1;
    }
    if (fresh) *fresh = true;
    return id;
}

const uint8_t *sw_strtab_str(const struct sw_strtab *t, uint32_t id, size_t *n) {
    *n = t->len[id];
    return t->text.p + t->off[id];
}
