/*
 * snap_writer.c: the snapshot as pickle protocol 4 or JSON, byte for byte
 * as analysis/snapshot/emit.ts writes it: the same opcodes (EMPTY_DICT/LIST,
 * MARK, SETITEMS, APPENDS in batches of 1000, BININT1/2, BININT, LONG1,
 * SHORT_BINUNICODE/BINUNICODE, MEMOIZE, BINGET/LONG_BINGET), the same
 * strings and frames lists memoized in the same order, and the same two
 * ways of writing an integer (its `int()` and its entries' `putInt`), each
 * with its JavaScript conversions, so that odd values come out alike too.
 */
#include "analysis.h"
#include "out_buffer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 1000

static const char *const ACTIONS[6] = {
    "alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "oom",
};

/* The fixed bytes of a trace entry whose keys and action are memoized
 * below 256, between its three integers and its frames: stored a word at a
 * time (sw_writer_entry). */
struct entry_bytes {
    uint64_t head;           /* EMPTY_DICT MARK, BINGET action, the action, addr */
    uint16_t size_key;       /* BINGET size */
    uint64_t stream_to_time; /* BINGET stream, BININT1 0, BINGET time_us: 6 bytes */
    uint16_t frames_key;     /* BINGET frames */
};

struct sw_writer {
    struct sw_out out;
    bool json;
    const struct sw_rows *rows;
    struct sw_error err;
    /* pickle */
    uint32_t memo;
    /* Memoized strings: those of the log's frames (rows->strings) by their
     * id in frame_string_memo (-1: not yet), any other text (keys,
     * actions) in `strings`, its memo index in string_memo. A copy of every
     * frame string held all of them twice: a log whose rows each had a
     * stack of their own (3.6M strings) peaked at 583 MB. */
    int64_t *frame_string_memo;
    struct sw_strtab strings;
    uint32_t *string_memo;
    size_t string_memo_cap;
    int64_t *frames_memo; /* per stack id, -1 until written */
    struct entry_bytes entry[6]; /* per action, once entry_ok */
    bool entry_ok[6];
    /* per open container: items so far (lists), -1 (dicts); JSON: filled */
    int64_t *open;
    size_t nopen, open_cap;
    /* JSON */
    bool after_key;
    /* per stack id, n == 0 until made: on its second use (a stack used
     * once, as when each row has its own, is written from scratch) */
    struct sw_bytes *frames_json;
    uint8_t *frames_seen;
    struct sw_bytes frames_scratch;
    struct sw_bytes scratch;
};

/* ---- JavaScript's conversions of a number to an integer ---- */

static double modulo(double v, double m) {
    double r = fmod(trunc(v), m);
    return r < 0 ? r + m : r;
}
static uint32_t to_uint32(double v) {
    /* Whole in 64 bits: the low 32 of the truncated value, two's complement. */
    if (v >= 0 && v < 18446744073709551616.0) return (uint32_t)(uint64_t)v;
    if (v < 0 && v > -9223372036854775808.0) return (uint32_t)(int64_t)v;
    return isfinite(v) ? (uint32_t)modulo(v, 4294967296.0) : 0;
}
static int32_t to_int32(double v) { return (int32_t)to_uint32(v); }

/* ---- containers ---- */

static void push_open(struct sw_writer *w, int64_t v) {
    if (w->nopen == w->open_cap) {
        w->open_cap = w->open_cap ? w->open_cap * 2 : 16;
        w->open = realloc(w->open, w->open_cap * sizeof *w->open);
        if (!w->open) abort();
    }
    w->open[w->nopen++] = v;
}

static void before(struct sw_writer *w) {
    if (w->json) {
        if (w->after_key) {
            w->after_key = false;
            return;
        }
        if (!w->nopen) return;
        if (w->open[w->nopen - 1]) sw_out_byte(&w->out, ',');
        w->open[w->nopen - 1] = 1;
        return;
    }
    if (!w->nopen || w->open[w->nopen - 1] < 0) return;
    if (w->open[w->nopen - 1] % BATCH == 0) sw_out_byte(&w->out, '('); /* MARK */
}

static void after(struct sw_writer *w) {
    if (w->json || !w->nopen || w->open[w->nopen - 1] < 0) return;
    if (++w->open[w->nopen - 1] % BATCH == 0) sw_out_byte(&w->out, 'e'); /* APPENDS */
}

static uint32_t memoize(struct sw_writer *w) {
    sw_out_byte(&w->out, 0x94);
    return w->memo++;
}

static void get(struct sw_writer *w, uint32_t i) {
    uint8_t *b = sw_out_room(&w->out, 5);
    if (i < 256) {
        b[0] = 'h'; /* BINGET */
        b[1] = (uint8_t)i;
        w->out.n += 2;
    } else {
        b[0] = 'j'; /* LONG_BINGET */
        b[1] = (uint8_t)i;
        b[2] = (uint8_t)(i >> 8);
        b[3] = (uint8_t)(i >> 16);
        b[4] = (uint8_t)(i >> 24);
        w->out.n += 5;
    }
}

void sw_writer_dict_start(struct sw_writer *w) {
    before(w);
    if (w->json) {
        sw_out_byte(&w->out, '{');
        push_open(w, 0);
        return;
    }
    sw_out_byte(&w->out, '}'); /* EMPTY_DICT */
    sw_out_byte(&w->out, '('); /* MARK */
    push_open(w, -1);
}

void sw_writer_dict_end(struct sw_writer *w) {
    w->nopen--;
    if (w->json) {
        sw_out_byte(&w->out, '}');
        return;
    }
    sw_out_byte(&w->out, 'u'); /* SETITEMS */
    after(w);
}

void sw_writer_list_start(struct sw_writer *w) {
    before(w);
    sw_out_byte(&w->out, w->json ? '[' : ']'); /* EMPTY_LIST */
    push_open(w, 0);
}

void sw_writer_list_end(struct sw_writer *w) {
    int64_t n = w->open[--w->nopen];
    if (w->json) {
        sw_out_byte(&w->out, ']');
        return;
    }
    if (n % BATCH != 0) sw_out_byte(&w->out, 'e');
    after(w);
}

/* ---- integers ---- */

/* Whether n is a whole number in [0, 2^53): most values, for which every
 * rule of put_int comes down to the plain little-endian bytes. */
static inline bool whole(double n) {
    return n >= 0 && n < 9007199254740992.0 && n == (double)(int64_t)n;
}

/* put_whole's opcodes by a value's bit length: BININT1, BININT2, BININT,
 * then LONG1 with the fewest bytes that leave a sign bit. */
struct whole_op {
    uint16_t op; /* the opcode, and LONG1's length byte */
    uint8_t op_len, value_len;
};
#define LONG1(n) {0x8a | (n) << 8, 2, (n)}
static const struct whole_op WHOLE_OPS[65] = {
    [0 ... 8] = {'K', 1, 1},   [9 ... 16] = {'M', 1, 2},  [17 ... 31] = {'J', 1, 4},
    [32 ... 39] = LONG1(5),    [40 ... 47] = LONG1(6),    [48 ... 55] = LONG1(7),
    [56 ... 63] = LONG1(8),    [64] = LONG1(9),
};
#undef LONG1

/* A whole number below 2^53 as put_int writes it, without a branch on its
 * width: the opcode and the value's bytes stored whole (10 bytes of room),
 * the length they take returned. */
static inline size_t put_whole(uint8_t *b, uint64_t v) {
    const struct whole_op o = WHOLE_OPS[64 - __builtin_clzll(v | 1)];
    memcpy(b, &o.op, 2);
    memcpy(b + o.op_len, &v, 8);
    return (size_t)o.op_len + o.value_len;
}

/* emit.ts putInt, its typed-array stores included; returns bytes written. */
static size_t put_int(uint8_t *b, double n) {
    if (whole(n)) return put_whole(b, (uint64_t)(int64_t)n);
    if (n >= 0 && n < 256) {
        b[0] = 'K'; /* BININT1 */
        b[1] = (uint8_t)to_uint32(n);
        return 2;
    }
    if (n >= 0 && n < 65536) {
        uint32_t v = to_uint32(n);
        b[0] = 'M'; /* BININT2 */
        b[1] = (uint8_t)v;
        b[2] = (uint8_t)(v >> 8);
        return 3;
    }
    if (n >= -2147483648.0 && n <= 2147483647.0) {
        uint32_t v = (uint32_t)to_int32(n);
        b[0] = 'J'; /* BININT */
        b[1] = (uint8_t)v;
        b[2] = (uint8_t)(v >> 8);
        b[3] = (uint8_t)(v >> 16);
        b[4] = (uint8_t)(v >> 24);
        return 5;
    }
    /* LONG1 from two 32-bit halves. */
    uint32_t lo = to_uint32(n);
    double hi = (n - lo) / 4294967296.0;
    int len = 4 + (hi < 0x80 ? 1 : hi < 0x8000 ? 2 : hi < 0x800000 ? 3 : 4);
    uint32_t h = to_uint32(hi);
    b[0] = 0x8a;
    b[1] = (uint8_t)len;
    b[2] = (uint8_t)lo;
    b[3] = (uint8_t)(lo >> 8);
    b[4] = (uint8_t)(lo >> 16);
    b[5] = (uint8_t)(lo >> 24);
    for (int k = 0; k < len - 4; k++) b[6 + k] = (uint8_t)(h >> (8 * k));
    return (size_t)(2 + len);
}

static void range_error(struct sw_writer *w, double n, bool wide) {
    char num[40];
    sw_js_num_str(n, num);
    if (wide) sw_fail(&w->err, SW_ERR_RANGE, "Cannot write %s: wider than 8 bytes", num);
    else
        sw_fail(&w->err, SW_ERR_RANGE,
                "The number %s cannot be converted to a BigInt because it is not an integer", num);
}

void sw_writer_int(struct sw_writer *w, double n) {
    before(w);
    if (w->json) {
        char num[40];
        sw_out_put(&w->out, num, (size_t)sw_js_num_str(n, num));
        return;
    }
    bool integer = isfinite(n) && n == trunc(n);
    if (integer && fabs(n) <= 9007199254740991.0 && n >= -2147483648.0) {
        w->out.n += put_int(sw_out_room(&w->out, 16), n);
    } else if (n >= 0 && n < 65536) {
        uint32_t v = to_uint32(n) & 0xffff;
        uint8_t *b = sw_out_room(&w->out, 3);
        b[0] = 'M';
        b[1] = (uint8_t)v;
        b[2] = (uint8_t)(v >> 8);
        w->out.n += 3;
    } else if (n >= -2147483648.0 && n <= 2147483647.0) {
        uint32_t v = (uint32_t)to_int32(n);
        uint8_t *b = sw_out_room(&w->out, 5);
        b[0] = 'J';
        b[1] = (uint8_t)v;
        b[2] = (uint8_t)(v >> 8);
        b[3] = (uint8_t)(v >> 16);
        b[4] = (uint8_t)(v >> 24);
        w->out.n += 5;
    } else if (!integer) {
        range_error(w, n, false);
    } else if (n >= 9223372036854775808.0 || n < -9223372036854775808.0) {
        range_error(w, n, true);
    } else {
        /* Python's LONG1: the shortest two's complement. */
        int64_t v = (int64_t)n;
        uint8_t bytes[8];
        int len = 0;
        for (;;) {
            uint8_t b = (uint8_t)(v & 0xff);
            bytes[len++] = b;
            v >>= 8;
            if ((v == 0 && b < 0x80) || (v == -1 && b >= 0x80)) break;
        }
        sw_out_byte(&w->out, 0x8a);
        sw_out_byte(&w->out, (uint8_t)len);
        sw_out_put(&w->out, bytes, (size_t)len);
    }
    after(w);
}

/* ---- strings ---- */

/* The memo index of text s (-1: none yet), whichever table holds it. */
static int64_t memo_of(const struct sw_writer *w, const uint8_t *s, size_t n) {
    int64_t id = sw_strtab_find(&w->strings, s, n);
    if (id >= 0) return (int64_t)w->string_memo[id];
    /* A frame's string of the same text, written before. */
    id = w->frame_string_memo ? sw_strtab_find(&w->rows->strings, s, n) : -1;
    return id < 0 ? -1 : w->frame_string_memo[id];
}

/* Text s written, memoized when `memo`; `frame`: its id among the log's
 * frame strings, -1 for other text. */
static void text_of(struct sw_writer *w, const uint8_t *s, size_t n, bool memo, int64_t frame) {
    before(w);
    if (w->json) {
        w->scratch.n = 0;
        sw_json_string(&w->scratch, s, n);
        sw_out_put(&w->out, w->scratch.p, w->scratch.n);
        return;
    }
    int64_t seen = -1;
    if (memo && frame >= 0) {
        /* Its own memo, else other text of the same bytes (a key). */
        seen = w->frame_string_memo[frame];
        int64_t id = seen < 0 ? sw_strtab_find(&w->strings, s, n) : -1;
        if (id >= 0) seen = w->frame_string_memo[frame] = w->string_memo[id];
    } else if (memo) {
        seen = memo_of(w, s, n);
    }
    if (seen >= 0) {
        get(w, (uint32_t)seen);
    } else {
        uint8_t *b = sw_out_room(&w->out, 5);
        if (n < 256) {
            b[0] = 0x8c; /* SHORT_BINUNICODE */
            b[1] = (uint8_t)n;
            w->out.n += 2;
        } else {
            b[0] = 'X'; /* BINUNICODE */
            b[1] = (uint8_t)n;
            b[2] = (uint8_t)(n >> 8);
            b[3] = (uint8_t)(n >> 16);
            b[4] = (uint8_t)(n >> 24);
            w->out.n += 5;
        }
        sw_out_put(&w->out, s, n);
        /* A frame's string goes by its id (frame_string), other text here. */
        if (memo && frame >= 0) {
            w->frame_string_memo[frame] = memoize(w);
        } else if (memo) {
            uint32_t id = sw_strtab_intern(&w->strings, s, n, NULL);
            if (id >= w->string_memo_cap) {
                w->string_memo_cap = w->string_memo_cap ? w->string_memo_cap * 2 : 64;
                w->string_memo = realloc(w->string_memo, w->string_memo_cap * sizeof *w->string_memo);
                if (!w->string_memo) abort();
            }
            w->string_memo[id] = memoize(w);
        }
    }
    after(w);
}

static void text(struct sw_writer *w, const uint8_t *s, size_t n, bool memo) { text_of(w, s, n, memo, -1); }

void sw_writer_key(struct sw_writer *w, const char *k) {
    if (w->json) {
        before(w);
        w->scratch.n = 0;
        sw_json_string(&w->scratch, (const uint8_t *)k, strlen(k));
        sw_out_put(&w->out, w->scratch.p, w->scratch.n);
        sw_out_byte(&w->out, ':');
        w->after_key = true;
        return;
    }
    text(w, (const uint8_t *)k, strlen(k), true);
}

static void str_bytes(struct sw_writer *w, const uint8_t *s, size_t n) {
    /* Short strings repeat (actions, states, file names): memoized. */
    text(w, s, n, sw_utf16_length(s, n) <= 64);
}

/* The log's frame string `id`, as str_bytes writes its text. */
static void frame_string(struct sw_writer *w, uint32_t id) {
    size_t n;
    const uint8_t *s = sw_strtab_str(&w->rows->strings, id, &n);
    /* Memoized before: no length to count again. */
    if (w->frame_string_memo[id] >= 0) text_of(w, s, n, true, id);
    else text_of(w, s, n, sw_utf16_length(s, n) <= 64, id);
}

void sw_writer_str(struct sw_writer *w, const char *s) {
    str_bytes(w, (const uint8_t *)s, strlen(s));
}

/* ---- frames ---- */

static void frames_json(struct sw_writer *w, int32_t stack, struct sw_bytes *out) {
    const struct sw_rows *r = w->rows;
    sw_bytes_put(out, "[", 1);
    for (uint32_t f = r->frame_at[stack]; f < r->frame_at[stack + 1]; f++) {
        const struct sw_frame *fr = &r->frames[f];
        size_t n;
        const uint8_t *s;
        if (f > r->frame_at[stack]) sw_bytes_put(out, ",", 1);
        sw_bytes_put(out, "{\"filename\":", 12);
        s = sw_strtab_str(&r->strings, fr->file, &n);
        sw_json_string(out, s, n);
        char num[40];
        sw_bytes_put(out, ",\"line\":", 8);
        /* JSON.stringify writes a number that is not finite as null. */
        if (isfinite(fr->line)) sw_bytes_put(out, num, (size_t)sw_js_num_str(fr->line, num));
        else sw_bytes_put(out, "null", 4);
        sw_bytes_put(out, ",\"name\":", 8);
        s = sw_strtab_str(&r->strings, fr->name, &n);
        sw_json_string(out, s, n);
        sw_bytes_put(out, "}", 1);
    }
    sw_bytes_put(out, "]", 1);
}

void sw_writer_frames(struct sw_writer *w, int32_t stack) {
    const struct sw_rows *r = w->rows;
    if (w->json) {
        struct sw_bytes *j = &w->frames_json[stack];
        if (!j->n && w->frames_seen[stack]) frames_json(w, stack, j);
        if (!j->n) {
            /* Its first use: made in scratch, kept only if used again. */
            w->frames_seen[stack] = 1;
            j = &w->frames_scratch;
            j->n = 0;
            frames_json(w, stack, j);
        }
        before(w);
        sw_out_put(&w->out, j->p, j->n);
        return;
    }
    if (w->frames_memo[stack] >= 0) {
        before(w);
        get(w, (uint32_t)w->frames_memo[stack]);
        after(w);
        return;
    }
    sw_writer_list_start(w);
    /* Memoized empty, filled afterwards: the memo holds the same list. */
    w->frames_memo[stack] = memoize(w);
    for (uint32_t f = r->frame_at[stack]; f < r->frame_at[stack + 1]; f++) {
        const struct sw_frame *fr = &r->frames[f];
        sw_writer_dict_start(w);
        sw_writer_key(w, "filename");
        frame_string(w, fr->file);
        sw_writer_key(w, "line");
        sw_writer_int(w, fr->line);
        sw_writer_key(w, "name");
        frame_string(w, fr->name);
        sw_writer_dict_end(w);
    }
    sw_writer_list_end(w);
}

/* ---- trace entries ---- */

/* Kept out of sw_writer_entry's fast path, whose registers it took. */
__attribute__((noinline, cold)) static void entry_by_fields(struct sw_writer *w, int action,
                                                            double addr, double size, double t,
                                                            int32_t stack) {
    sw_writer_dict_start(w);
    sw_writer_key(w, "action");
    sw_writer_str(w, ACTIONS[action]);
    sw_writer_key(w, action == A_OOM ? "device_free" : "addr");
    sw_writer_int(w, addr);
    sw_writer_key(w, "size");
    sw_writer_int(w, size);
    sw_writer_key(w, "stream");
    sw_writer_int(w, 0);
    sw_writer_key(w, "time_us");
    sw_writer_int(w, t);
    sw_writer_key(w, "frames");
    sw_writer_frames(w, stack);
    sw_writer_dict_end(w);
}

/* An entry's fixed bytes once its keys and action were all written with
 * memo indices below 256 (the first entry of each action writes them). */
__attribute__((noinline)) static bool entry_bytes_made(struct sw_writer *w, int action) {
    const char *keys[7] = {"action", ACTIONS[action], action == A_OOM ? "device_free" : "addr",
                           "size", "stream", "time_us", "frames"};
    uint8_t m[7];
    for (int k = 0; k < 7; k++) {
        int64_t i = memo_of(w, (const uint8_t *)keys[k], strlen(keys[k]));
        if (i < 0 || i > 255) return false;
        m[k] = (uint8_t)i;
    }
    const uint8_t head[8] = {'}', '(', 'h', m[0], 'h', m[1], 'h', m[2]};
    const uint8_t size_key[2] = {'h', m[3]};
    const uint8_t stream_to_time[8] = {'h', m[4], 'K', 0, 'h', m[5], 0, 0};
    const uint8_t frames_key[2] = {'h', m[6]};
    struct entry_bytes *e = &w->entry[action];
    memcpy(&e->head, head, 8);
    memcpy(&e->size_key, size_key, 2);
    memcpy(&e->stream_to_time, stream_to_time, 8);
    memcpy(&e->frames_key, frames_key, 2);
    w->entry_ok[action] = true;
    return true;
}


void sw_writer_entry(struct sw_writer *w, int action, double addr, double size, double t,
                     int32_t stack) {
    if (w->json || !(w->entry_ok[action] || entry_bytes_made(w, action)) ||
        w->frames_memo[stack] < 0) {
        entry_by_fields(w, action, addr, size, t, stack);
        return;
    }
    /* The entry in one room, a word at a time. Entries are items of a
     * list, whose MARK and APPENDS (before and after) are written here
     * too; `unlisted` stands in where there is none. */
    int64_t unlisted = -1;
    int64_t *items = w->nopen ? &w->open[w->nopen - 1] : &unlisted;
    const bool listed = *items >= 0;
    const int64_t in_batch = listed ? *items % BATCH : -1;
    *items += listed;
    const struct entry_bytes *e = &w->entry[action];
    uint8_t *q = sw_out_room(&w->out, 64), *start = q;
    *q = '('; /* MARK, kept at a batch's start */
    q += in_batch == 0;
    memcpy(q, &e->head, 8);
    q += 8;
    if (whole(addr) && whole(size) && whole(t)) {
        q += put_whole(q, (uint64_t)addr);
        memcpy(q, &e->size_key, 2);
        q += 2;
        q += put_whole(q, (uint64_t)size);
        memcpy(q, &e->stream_to_time, 8);
        q += 6;
        q += put_whole(q, (uint64_t)t);
    } else {
        q += put_int(q, addr);
        memcpy(q, &e->size_key, 2);
        q += 2;
        q += put_int(q, size);
        memcpy(q, &e->stream_to_time, 8);
        q += 6;
        q += put_int(q, t);
    }
    memcpy(q, &e->frames_key, 2);
    q += 2;
    const uint32_t f = (uint32_t)w->frames_memo[stack];
    if (f < 256) {
        q[0] = 'h'; /* BINGET */
        q[1] = (uint8_t)f;
        q += 2;
    } else {
        q[0] = 'j'; /* LONG_BINGET */
        memcpy(q + 1, &f, 4);
        q += 5;
    }
    *q++ = 'u'; /* SETITEMS */
    *q = 'e';   /* APPENDS, kept at a batch's end */
    q += in_batch == BATCH - 1;
    w->out.n += (size_t)(q - start);
}

/* ---- life ---- */

struct sw_writer *sw_writer_new(int fd, bool json, const struct sw_rows *rows) {
    struct sw_writer *w = calloc(1, sizeof *w);
    if (!w) abort();
    w->json = json;
    w->rows = rows;
    sw_out_init(&w->out, fd);
    sw_strtab_init(&w->strings);
    if (json) {
        w->frames_json = calloc(rows->nstacks, sizeof *w->frames_json);
        w->frames_seen = calloc(rows->nstacks + 1, 1);
        if (!w->frames_json || !w->frames_seen) abort();
    } else {
        w->frame_string_memo = malloc((rows->strings.count + 1) * sizeof *w->frame_string_memo);
        if (!w->frame_string_memo) abort();
        for (size_t i = 0; i < rows->strings.count; i++) w->frame_string_memo[i] = -1;
        w->frames_memo = malloc(rows->nstacks * sizeof *w->frames_memo);
        if (!w->frames_memo) abort();
        for (size_t i = 0; i < rows->nstacks; i++) w->frames_memo[i] = -1;
        sw_out_byte(&w->out, 0x80); /* PROTO 4 */
        sw_out_byte(&w->out, 4);
    }
    return w;
}

bool sw_writer_failed(const struct sw_writer *w) { return w->err.kind != SW_OK; }

bool sw_writer_finish(struct sw_writer *w, double *bytes, struct sw_error *err) {
    if (!w->json) sw_out_byte(&w->out, '.'); /* STOP */
    int e = sw_out_close(&w->out);
    *bytes = w->out.total;
    if (w->err.kind != SW_OK) {
        *err = w->err;
        return false;
    }
    if (e) {
        sw_fail(err, SW_ERR_IO, "Cannot write the snapshot: %s", strerror(e));
        return false;
    }
    return true;
}

void sw_writer_free(struct sw_writer *w) {
    if (w->frames_json)
        for (size_t i = 0; i < w->rows->nstacks; i++) sw_bytes_free(&w->frames_json[i]);
    free(w->frames_json);
    free(w->frames_seen);
    sw_bytes_free(&w->frames_scratch);
    free(w->frame_string_memo);
    free(w->frames_memo);
    free(w->string_memo);
    free(w->open);
    sw_strtab_free(&w->strings);
    sw_bytes_free(&w->scratch);
    free(w);
}
