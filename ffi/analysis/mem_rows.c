/*
 * mem_rows.c: the memory rows of a log, kept in chunks of 65,536 rows of 48
 * bytes (a 1 GB log fits in a few hundred MB and never needs a copy to
 * grow), and the stacks they name interned (row_order.c puts them in
 * time order). The rules are analysis/snapshot/rows.ts's.
 */
#define _GNU_SOURCE
#include "analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void sw_rows_init(struct sw_rows *r) {
    memset(r, 0, sizeof *r);
    sw_strtab_init(&r->stack_keys);
    sw_strtab_init(&r->strings);
    sw_map_init(&r->block_level, 16);
    r->max_device = -1;
    /* Stack 0 is the empty one. */
    r->stacks_cap = 64;
    r->frame_at = malloc(r->stacks_cap * sizeof *r->frame_at);
    if (!r->frame_at) abort();
    r->frame_at[0] = 0;
    r->frame_at[1] = 0;
    r->nstacks = 1;
}

void sw_rows_free(struct sw_rows *r) {
    for (size_t c = 0; c < r->nchunks; c++) free(r->chunks[c]);
    free(r->chunks);
    free(r->frames);
    free(r->frame_at);
    sw_strtab_free(&r->stack_keys);
    sw_strtab_free(&r->strings);
    sw_map_free(&r->block_level);
    memset(r, 0, sizeof *r);
}

/* ECMAScript ToInt32, as an Int32Array stores a number. */
static int32_t to_int32(double v) {
    if (v >= -2147483648.0 && v <= 2147483647.0) return (int32_t)v; /* truncates, as ToInt32 */
    if (!isfinite(v)) return 0;
    double t = trunc(v);
    double m = fmod(t, 4294967296.0);
    if (m < 0) m += 4294967296.0;
    return (int32_t)(uint32_t)m;
}

/* The next row's place (a chunk more when one is full). */
static struct sw_row *claim_row(struct sw_rows *r) {
    uint32_t i = r->count++;
    if ((i & (SW_ROW_CHUNK - 1)) == 0) {
        r->chunks = realloc(r->chunks, (r->nchunks + 1) * sizeof *r->chunks);
        if (!r->chunks) abort();
        r->chunks[r->nchunks] = malloc(SW_ROW_CHUNK * sizeof(struct sw_row));
        if (!r->chunks[r->nchunks]) abort();
        r->nchunks++;
    }
    return sw_row_at(r, i);
}

void sw_rows_append(struct sw_rows *r, int kind, int32_t device, double id, double t,
                    double pid, double addr, double size, int32_t stack) {
    struct sw_row *row = claim_row(r);
    /* -0 and 0 are one key and one value everywhere in the TypeScript. */
    row->id = id + 0.0;
    row->addr = addr + 0.0;
    row->size = size + 0.0;
    row->t = t + 0.0;
    row->pid = to_int32(pid);
    row->stack = stack;
    row->meta = kind | ((device + 2) << 4);
    if (device >= 0 && device > r->max_device) r->max_device = device;
    if (device == SW_CPU_DEVICE) r->has_cpu = true;
    if (device == SW_NO_DEVICE) r->has_no_device = true;
    /* rows.ts keys this set by the pid as read and the replay looks it up
     * by the stored Int32: only a pid both write alike can ever match. */
    if ((kind == K_BLK_ALLOC || kind == K_BLK_FREE) && pid == trunc(pid) &&
        pid >= -2147483648.0 && pid <= 2147483647.0 &&
        (!r->block_seen || (int32_t)pid != r->last_block_pid || device != r->last_block_device)) {
        /* Runs of one process and device are the rule: one look-up a run. */
        r->block_seen = true;
        r->last_block_pid = (int32_t)pid;
        r->last_block_device = device;
        sw_map_put(&r->block_level, (uint64_t)(uint32_t)(int32_t)pid, (uint64_t)(int64_t)device, 1);
    }
}

bool sw_rows_block_level(const struct sw_rows *r, int32_t pid, int32_t device) {
    return sw_map_get(&r->block_level, (uint64_t)(uint32_t)pid, (uint64_t)(int64_t)device) != NULL;
}

void sw_rows_add_frame(struct sw_rows *r, const uint8_t *file, size_t nfile, double line,
                       const uint8_t *name, size_t nname) {
    if (r->nframes == r->frames_cap) {
        r->frames_cap = r->frames_cap ? r->frames_cap * 2 : 64;
        r->frames = realloc(r->frames, r->frames_cap * sizeof *r->frames);
        if (!r->frames) abort();
    }
    struct sw_frame *f = &r->frames[r->nframes++];
    f->file = sw_strtab_intern(&r->strings, file, nfile, NULL);
    f->name = sw_strtab_intern(&r->strings, name, nname, NULL);
    f->line = line;
}

/* The frames added since the last stack ended make the next stack. */
static void end_stack(struct sw_rows *r) {
    if (r->nstacks + 2 > r->stacks_cap) {
        r->stacks_cap *= 2;
        r->frame_at = realloc(r->frame_at, r->stacks_cap * sizeof *r->frame_at);
        if (!r->frame_at) abort();
    }
    r->nstacks++;
    r->frame_at[r->nstacks] = (uint32_t)r->nframes;
}

int32_t sw_rows_stack(struct sw_rows *r, const uint8_t *key, size_t nkey, size_t npy) {
    const uint8_t *py = key, *c = key + npy + 1;
    size_t nc = nkey - npy - 1;
    if (npy == 0 && nc == 0) return 0;
    bool fresh;
    uint32_t k = sw_strtab_intern(&r->stack_keys, key, nkey, &fresh);
    int32_t id = (int32_t)k + 1;
    if (!fresh) return id;
    /* PyTorch lists frames innermost first, as both columns are written:
     * the C frames, then the Python ones. */
    sw_parse_frames(r, c, nc);
    sw_parse_frames(r, py, npy);
    end_stack(r);
    return id;
}

/* ---- two readers' rows made one ---- */

static int32_t adopt_stack(struct sw_rows *r, const struct sw_rows *from, int32_t k) {
    size_t n;
    const uint8_t *key = sw_strtab_str(&from->stack_keys, (uint32_t)k - 1, &n);
    bool fresh;
    int32_t id = (int32_t)sw_strtab_intern(&r->stack_keys, key, n, &fresh) + 1;
    if (!fresh) return id;
    for (uint32_t f = from->frame_at[k]; f < from->frame_at[k + 1]; f++) {
        const struct sw_frame *src = &from->frames[f];
        size_t nfile, nname;
        const uint8_t *file = sw_strtab_str(&from->strings, src->file, &nfile);
        const uint8_t *name = sw_strtab_str(&from->strings, src->name, &nname);
        sw_rows_add_frame(r, file, nfile, src->line, name, nname);
    }
    end_stack(r);
    return id;
}

void sw_rows_take(struct sw_rows *r, struct sw_rows *from) {
    /* A stack's id only names it: which rows share one is what counts. */
    int32_t *ids = malloc(from->nstacks * sizeof *ids);
    if (!ids) abort();
    ids[0] = 0;
    for (size_t k = 1; k < from->nstacks; k++) ids[k] = adopt_stack(r, from, (int32_t)k);
    for (uint32_t i = 0; i < from->count; i++) {
        struct sw_row *row = sw_row_at(from, i);
        row->stack = ids[row->stack];
    }
    /* The other reader's chunks are taken as they are, not copied (a copy
     * cost a fresh page per 85 rows): this reader's last chunk is filled
     * up with gaps, stamped as its last row so a list rising in time
     * still rises. */
    if (from->count && (r->count & (SW_ROW_CHUNK - 1))) {
        const struct sw_row last = *sw_row_at(r, r->count - 1);
        while (r->count & (SW_ROW_CHUNK - 1))
            *claim_row(r) = (struct sw_row){.id = last.id, .t = last.t,
                                            .meta = K_GAP | ((SW_NO_DEVICE + 2) << 4)};
    }
    if (from->count) {
        size_t taken = (from->count + SW_ROW_CHUNK - 1) >> SW_ROW_SHIFT;
        r->chunks = realloc(r->chunks, (r->nchunks + taken) * sizeof *r->chunks);
        if (!r->chunks) abort();
        memcpy(r->chunks + r->nchunks, from->chunks, taken * sizeof *r->chunks);
        memset(from->chunks, 0, taken * sizeof *from->chunks);
        r->nchunks += taken;
        r->count += from->count;
    }
    free(ids);
    if (from->max_device > r->max_device) r->max_device = from->max_device;
    r->has_cpu = r->has_cpu || from->has_cpu;
    r->has_no_device = r->has_no_device || from->has_no_device;
    r->skipped += from->skipped;
    r->bytes += from->bytes;
    for (size_t s = 0; s < from->block_level.cap; s++)
        if (from->block_level.used[s])
            sw_map_put(&r->block_level, from->block_level.keys[2 * s],
                       from->block_level.keys[2 * s + 1], 1);
}
