/*
 * analysis.h: what the files of libstompwatch_analysis.so share. The library
 * turns an event log into a memory_viz snapshot with the rules of
 * the TypeScript files of analysis/snapshot/, value for value: JavaScript numbers stay doubles
 * here (sizes past 2^53 round as they do there), and text is decoded as
 * TextDecoder decodes it, so that both give the same bytes.
 */
#ifndef SW_ANALYSIS_H
#define SW_ANALYSIS_H

#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdbool.h>

#define SW_EXPORT __attribute__((visibility("default")))

/* ---- errors: one line for a person, and its kind ---------------------- */

enum sw_err_kind {
    SW_OK = 0,
    SW_ERR_CSV = 1,   /* MemscopeCsvError: not an event log */
    SW_ERR_RANGE = 2, /* RangeError: an option the log refutes, a value too wide */
    SW_ERR_IO = 3,    /* anything else (a read or write that failed) */
};

struct sw_error {
    int kind;
    char msg[8192];
};

void sw_fail(struct sw_error *err, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- growable byte buffer --------------------------------------------- */

struct sw_bytes {
    uint8_t *p;
    size_t n, cap;
};

void sw_bytes_reserve(struct sw_bytes *b, size_t more);
void sw_bytes_put(struct sw_bytes *b, const void *src, size_t n);
void sw_bytes_free(struct sw_bytes *b);

/* ---- JavaScript's text and number rules (js_text.c) ------------------- */

/* Appends bytes [s, e) as TextDecoder would decode them, re-encoded:
 * each maximal invalid subpart becomes U+FFFD. */
void sw_utf8_sanitize(struct sw_bytes *out, const uint8_t *s, const uint8_t *e);
/* Appends a CSV field's text: quotes stripped when both ends have one, `""`
 * turned into `"`, then sanitized. */
void sw_field_text(struct sw_bytes *out, const uint8_t *s, const uint8_t *e);
/* Length in UTF-16 code units of valid UTF-8 (JavaScript's `s.length`). */
size_t sw_utf16_length(const uint8_t *s, size_t n);
/* Bytes of the JavaScript white space (or line terminator) at s, else 0. */
int sw_js_space(const uint8_t *s, const uint8_t *e);
/* Whether the code point at s is a line terminator (\n \r U+2028 U+2029);
 * its byte length, else 0. */
int sw_js_terminator(const uint8_t *s, const uint8_t *e);
/* String.prototype.trim on valid UTF-8 [*s, *e). */
void sw_js_trim(const uint8_t **s, const uint8_t **e);
/* analysis/memscope_csv/_bytes.ts parseDecimal: NAN when not such a number. */
double sw_parse_decimal(const uint8_t *s, const uint8_t *e);
/* JavaScript's Number(text) on valid UTF-8. */
double sw_js_number(const uint8_t *s, const uint8_t *e);
/* JavaScript's String(n); returns the length written (at most 32). */
int sw_js_num_str(double n, char *out);
/* JSON.stringify of valid UTF-8 text, appended. */
void sw_json_string(struct sw_bytes *out, const uint8_t *s, size_t n);

/* ---- hash tables (hash.c) --------------------------------------------- */

/* Two 64-bit words to a 32-bit value; linear probing, deletion by shifting
 * back, so that a map that churns keeps no tombstones. */
struct sw_map {
    uint64_t *keys; /* 2 words per slot */
    uint32_t *vals;
    uint8_t *used;
    size_t cap, n;
};

void sw_map_init(struct sw_map *m, size_t hint);
void sw_map_free(struct sw_map *m);
/* Pointer to the value of the key, NULL when absent. */
uint32_t *sw_map_get(const struct sw_map *m, uint64_t a, uint64_t b);
/* Sets the key's value; returns true when the key was new. */
bool sw_map_put(struct sw_map *m, uint64_t a, uint64_t b, uint32_t v);
bool sw_map_del(struct sw_map *m, uint64_t a, uint64_t b);
void sw_map_clear(struct sw_map *m);

/* Address to index (addr_map.c): the replay's tables. */
struct sw_addr_slot {
    uint64_t key;
    uint32_t val, used;
};

struct sw_addr_map {
    struct sw_addr_slot *slots;
    size_t cap, n;
    unsigned shift;
};

void sw_addr_init(struct sw_addr_map *m);
void sw_addr_free(struct sw_addr_map *m);
uint32_t *sw_addr_get(const struct sw_addr_map *m, uint64_t key);
void sw_addr_put(struct sw_addr_map *m, uint64_t key, uint32_t val);
void sw_addr_del(struct sw_addr_map *m, uint64_t key);
/* The slot a look-up of `key` reads first, fetched into the cache. */
void sw_addr_prefetch(const struct sw_addr_map *m, uint64_t key);

/* A segment's live block addresses, ascending (addr_set.c), each with a
 * value (the block's or segment's index): sorted chunks, so that a segment
 * holding tens of thousands of blocks takes one in or out without moving
 * the rest. Zeroed: empty. */
struct sw_addr_chunk {
    uint32_t n, cap;
    double a[]; /* cap addresses, then cap values (sw_addr_chunk_values) */
};
static inline uint32_t *sw_addr_chunk_values(const struct sw_addr_chunk *c) { return (uint32_t *)(c->a + c->cap); }

struct sw_addr_set {
    struct sw_addr_chunk **chunks;
    double *lasts; /* per chunk, its last address */
    uint32_t nchunks, cap;
    uint32_t n; /* addresses in all */
};

/* A place in a set: chunk and index; {nchunks, 0} past its end. */
struct sw_addr_at {
    uint32_t c, i;
};

/* The addresses a look-up of `v` reads, fetched into the cache; returns
 * a hint for the look-ups of `v` to come, which stays safe to give
 * whatever changed the set meanwhile (and given to another set). */
uint32_t sw_addr_set_prefetch(const struct sw_addr_set *s, double v);
/* A hint that saves nothing. */
#define SW_NO_HINT UINT32_MAX
void sw_addr_set_free(struct sw_addr_set *s);
/* Empty, keeping room for the set's next use. */
void sw_addr_set_clear(struct sw_addr_set *s);
/* Adds `v` (not in the set) with its value at `at`, the place
 * sw_addr_set_lower gave for it with no change to the set since. */
void sw_addr_set_insert_at(struct sw_addr_set *s, struct sw_addr_at at, double v, uint32_t value);
/* Takes `v` out, when it is in (`hint`: as for sw_addr_set_lower_near). */
void sw_addr_set_erase(struct sw_addr_set *s, double v, uint32_t hint);
/* The place of the first address that is `v` or more; _near with a hint
 * sw_addr_set_prefetch gave for `v` (or SW_NO_HINT). */
struct sw_addr_at sw_addr_set_lower(const struct sw_addr_set *s, double v);
struct sw_addr_at sw_addr_set_lower_near(const struct sw_addr_set *s, double v, uint32_t hint);
/* Steps back one place; false at the first. */
bool sw_addr_set_prev(const struct sw_addr_set *s, struct sw_addr_at *at);
static inline bool sw_addr_set_valid(const struct sw_addr_set *s, struct sw_addr_at at) {
    return at.c < s->nchunks && at.i < s->chunks[at.c]->n;
}
static inline double sw_addr_set_get(const struct sw_addr_set *s, struct sw_addr_at at) {
    return s->chunks[at.c]->a[at.i];
}
static inline uint32_t sw_addr_set_value(const struct sw_addr_set *s, struct sw_addr_at at) {
    return sw_addr_chunk_values(s->chunks[at.c])[at.i];
}
static inline void sw_addr_set_next(const struct sw_addr_set *s, struct sw_addr_at *at) {
    if (++at->i == s->chunks[at->c]->n) {
        at->c++;
        at->i = 0;
    }
}
/* Interns byte strings: the same bytes give the same dense id. */
struct sw_strtab {
    struct sw_bytes text; /* every string, back to back */
    uint64_t *off;        /* per id: where its bytes start in text */
    uint32_t *len;
    uint64_t *hash;
    size_t count, cap;
    uint32_t *slots;      /* id + 1, 0 empty */
    size_t nslots;
};

void sw_strtab_init(struct sw_strtab *t);
void sw_strtab_free(struct sw_strtab *t);
/* The id of the bytes; *fresh set when they were new. */
uint32_t sw_strtab_intern(struct sw_strtab *t, const uint8_t *s, size_t n, bool *fresh);
/* -1 when absent. */
int64_t sw_strtab_find(const struct sw_strtab *t, const uint8_t *s, size_t n);
const uint8_t *sw_strtab_str(const struct sw_strtab *t, uint32_t id, size_t *n);

/* ---- memory rows (mem_rows.c) ----------------------------------------- */

/* K_GAP: no row, a place left empty so that the second reader's chunks
 * could be taken whole (sw_rows_take); it has no device. */
enum sw_kind { K_SEG_ALLOC = 0, K_SEG_FREE = 1, K_BLK_ALLOC = 2, K_BLK_FREE = 3, K_OOM = 4, K_GAP = 5 };

#define SW_NO_DEVICE (-1)
#define SW_CPU_DEVICE (-2)

/* One memory row: 48 bytes (rows.ts keeps the same numbers). */
struct sw_row {
    double id, addr, size, t;
    int32_t pid;   /* as an Int32Array keeps it */
    int32_t stack;
    int32_t meta;  /* kind in the low 4 bits, device code + 2 above */
};

#define SW_ROW_SHIFT 16
#define SW_ROW_CHUNK (1u << SW_ROW_SHIFT)

struct sw_frame {
    uint32_t file, name; /* strings of sw_rows.strings */
    double line;
};

struct sw_rows {
    struct sw_row **chunks;
    size_t nchunks;
    uint32_t count;
    /* Interned stacks: per id, its frames [frame_at[id], frame_at[id + 1]). */
    struct sw_frame *frames;
    size_t nframes, frames_cap;
    uint32_t *frame_at;
    size_t nstacks, stacks_cap;
    struct sw_strtab stack_keys; /* python \0 c -> stack id - 1 */
    struct sw_strtab strings;    /* frame file names and names */
    struct sw_map block_level;   /* (pid, device code) with allocator rows */
    int32_t max_device;
    bool has_cpu, has_no_device;
    double skipped, bytes;
    bool block_seen;
    int32_t last_block_pid, last_block_device;
};

static inline struct sw_row *sw_row_at(const struct sw_rows *r, uint32_t i) {
    return &r->chunks[i >> SW_ROW_SHIFT][i & (SW_ROW_CHUNK - 1)];
}
/* Row order[k] of a walk in time order. Once sorted, the order jumps
 * about the chunks, and waiting for each row's cache line cost the replay
 * half its time: the row 16 places on is asked for now, so its miss
 * overlaps the work on this one. */
static inline struct sw_row *sw_row_in_order(const struct sw_rows *r, const uint32_t *order,
                                             size_t k, size_t n) {
    if (k + 16 < n) __builtin_prefetch(sw_row_at(r, order[k + 16]));
    return sw_row_at(r, order[k]);
}
static inline int sw_row_kind(const struct sw_row *r) { return r->meta & 15; }
static inline int32_t sw_row_device(const struct sw_row *r) { return (r->meta >> 4) - 2; }
static inline void sw_row_set_device(struct sw_row *r, int32_t d) {
    r->meta = (r->meta & 15) | ((d + 2) << 4);
}

void sw_rows_init(struct sw_rows *r);
void sw_rows_free(struct sw_rows *r);
/* rows.ts append; `pid` as parsed (a double), stored as ToInt32. */
void sw_rows_append(struct sw_rows *r, int kind, int32_t device, double id,
                    double t, double pid, double addr, double size, int32_t stack);
/* rows.ts stackOf on decoded texts: `key` holds the Python stack's npy
 * bytes, a NUL, then the C stack's (the two texts' key, as made). */
int32_t sw_rows_stack(struct sw_rows *r, const uint8_t *key, size_t nkey, size_t npy);
bool sw_rows_block_level(const struct sw_rows *r, int32_t pid, int32_t device);
/* Appends the rows `from` read after those of r (a second reader's share
 * of the file), emptying `from`'s rows as it goes. */
void sw_rows_take(struct sw_rows *r, struct sw_rows *from);
/* Whether a row stamped (t, id) comes before one stamped (t0, id0) in
 * rows.ts order(): by time, then ID (a NaN ID ties, so file order holds). */
static inline bool sw_rows_before(double t, double id, double t0, double id0) {
    return t < t0 || (t == t0 && id < id0);
}
/* rows.ts order(): sorts `list` (ascending row indices) in place by
 * timestamp, then ID, then file order. */
void sw_rows_order(const struct sw_rows *r, uint32_t *list, size_t n);
/* Positions in a list of rows, rising. */
struct sw_positions {
    uint32_t *p;
    size_t n, cap;
};
void sw_positions_push(struct sw_positions *at, size_t k);
/* Whether a row stamped (t, id) right after one stamped (t0, id0), in a
 * list rising in time, leaves their run of one timestamp for
 * sw_rows_order_runs to sort: IDs falling, or one not a number (whose
 * place only the sort tells). */
static inline bool sw_rows_untidy_run(double t, double id, double t0, double id0) {
    return t == t0 && (id < id0 || id != id || id0 != id0);
}
/* How a list of rows stands in rows.ts order(), noted row by row: rising
 * in time; in order by time, then ID (sw_rows_before); and, while it
 * rises, the places of runs of one timestamp to sort by ID. */
struct sw_list_order {
    bool rising, sorted;
    double last_t, last_id; /* the row noted last */
    struct sw_positions untidy;
};
static inline void sw_list_order_init(struct sw_list_order *o) {
    *o = (struct sw_list_order){.rising = true, .sorted = true, .last_t = -INFINITY,
                                .last_id = -INFINITY};
}
/* Notes the row stamped (t, id) at position k, after those noted. */
static inline void sw_list_order_note(struct sw_list_order *o, double t, double id, size_t k) {
    if (o->rising && t < o->last_t) o->rising = o->sorted = false;
    if (o->rising) {
        if (sw_rows_before(t, id, o->last_t, o->last_id)) o->sorted = false;
        if (sw_rows_untidy_run(t, id, o->last_t, o->last_id)) sw_positions_push(&o->untidy, k);
    }
    o->last_t = t;
    o->last_id = id;
}
/* sw_rows_order's answer for a list rising in time, but not by time, then
 * ID: the runs of one timestamp around the places `o` noted sorted by ID,
 * then file order; every other run is in order already. */
void sw_rows_order_runs(const struct sw_rows *r, uint32_t *list, size_t n,
                        const struct sw_list_order *o);

/* device_lists.c: the rows cut into one list per device (row indices), put
 * in rows.ts order() for the replay. */
struct sw_device_lists {
    size_t devices;
    uint32_t **list;
    size_t *n;
    struct sw_list_order *order; /* how each list stood when cut */
};
/* Cuts `order` (NULL: file order) into lists for devices 0..devices-1;
 * rows of no such device are left out. */
void sw_device_lists_split(const struct sw_rows *rows, const uint32_t *order, size_t devices,
                           struct sw_device_lists *out);
/* Puts each list in rows.ts order(), or device `only`'s alone (a snapshot
 * of one device replays no other: on a log of 200 devices, the other 199
 * lists were sorted for nothing); `only` < 0: every list. */
void sw_device_lists_order(const struct sw_rows *rows, struct sw_device_lists *by, double only);
void sw_device_lists_free(struct sw_device_lists *by);

/* frames.ts-equivalent of rows.ts parseFrames: appends the frames of one
 * stack column (decoded text) to the stack being built. */
/* Appends a frame to the stack being built (its strings interned). */
void sw_rows_add_frame(struct sw_rows *r, const uint8_t *file, size_t nfile, double line,
                       const uint8_t *name, size_t nname);
void sw_parse_frames(struct sw_rows *r, const uint8_t *s, size_t n);

/* ---- the CSV reader (csv_header.c, memory_row.c, csv_reader.c) -------- */

/* Header positions of the columns the converter reads; -1 when absent. */
struct sw_csv_cols {
    int id, event, type, ts, pid, device, ptr, attr, py, c;
    int maxcol; /* the highest of them */
};

/* Reads the header row [s, e) (BOM already cut); false with err set when it
 * is not an event log's, in header.ts's words. */
bool sw_csv_header(const uint8_t *s, const uint8_t *e, const char *label,
                   struct sw_csv_cols *cols, struct sw_error *err);

/* One data row [s, e) with its first separators (commas outside quotes):
 * field k is [s or seps[k - 1] + 1, seps[k] or e), absent past nsep. */
struct sw_csv_row {
    const uint8_t *s, *e;
    const uint8_t *const *seps;
    int nsep;
};

struct sw_read_options;

/* Adds the row to rows when it is a memory row rows.ts keeps. */
void sw_memory_row(struct sw_rows *rows, const struct sw_csv_cols *cols,
                   const struct sw_read_options *opt, const struct sw_csv_row *row,
                   struct sw_bytes *scratch);

struct sw_read_options {
    bool has_pid;
    double pid;
    bool has_until;
    double until_ns;
    /* Leave out host rows (cpu/host): another log holds them too. */
    bool skip_host;
};

/* Reads the memory rows of the event log at path into rows (adding to what
 * is there). Returns false with err set for a file that is not an event log
 * or cannot be read; `label` names it in messages. */
bool sw_read_memory_rows(const char *path, const char *label,
                         const struct sw_read_options *opt, struct sw_rows *rows,
                         struct sw_error *err);

/* ---- the writer (snap_writer.c) --------------------------------------- */

enum sw_action { A_ALLOC = 0, A_FREE_REQ = 1, A_FREE_DONE = 2, A_SEG_ALLOC = 3, A_SEG_FREE = 4, A_OOM = 5 };

struct sw_writer;

/* Bytes go to `fd`, written by a second thread while the next are made. */
struct sw_writer *sw_writer_new(int fd, bool json, const struct sw_rows *rows);
void sw_writer_dict_start(struct sw_writer *w);
void sw_writer_key(struct sw_writer *w, const char *k);
void sw_writer_dict_end(struct sw_writer *w);
void sw_writer_list_start(struct sw_writer *w);
void sw_writer_list_end(struct sw_writer *w);
void sw_writer_int(struct sw_writer *w, double n);
void sw_writer_str(struct sw_writer *w, const char *s);
void sw_writer_frames(struct sw_writer *w, int32_t stack);
void sw_writer_entry(struct sw_writer *w, int action, double addr, double size,
                     double t, int32_t stack);
/* Flushes everything; false with err set when a write or a value failed
 * (the first failure is kept: later calls do nothing). */
bool sw_writer_finish(struct sw_writer *w, double *bytes, struct sw_error *err);
bool sw_writer_failed(const struct sw_writer *w);
void sw_writer_free(struct sw_writer *w);

/* ---- the replay (replay.c) -------------------------------------------- */

struct sw_end_block {
    double address, size;
    int32_t stack;
    bool active;
};

struct sw_end_segment {
    double address, size;
    int32_t stack;
    size_t first, count; /* blocks in sw_replayed.blocks */
};

struct sw_replayed {
    struct sw_end_segment *segs;
    size_t nsegs;
    struct sw_end_block *blocks;
    size_t nblocks;
    double freed_before_log, lost_frees;
};

/* What a replay sends its entries to. */
typedef void (*sw_entry_sink)(void *ctx, int action, double addr, double size,
                              int32_t stack, double t, double extra);

void sw_replay_device(const struct sw_rows *rows, const uint32_t *order, size_t n,
                      int32_t device, sw_entry_sink sink, void *ctx,
                      struct sw_replayed *out);
void sw_replayed_free(struct sw_replayed *r);

/* ---- device_traces on two threads (trace_pipe.c) ----------------------- */

struct sw_trace_job {
    const struct sw_rows *rows;
    uint32_t **lists; /* per device: its rows in time order */
    size_t *counts;
    size_t shown;     /* devices written */
    double device;    /* the one device wanted, -1 for all */
    double max_entries; /* -1 for all */
    bool history;
    struct sw_replayed *ends; /* filled: per device, its end state */
    double entries, dropped, freed, overlapped;
};

/* Writes one list of trace entries per device (the lists of
 * `device_traces`) and fills the job's end states and counts. */
void sw_write_traces(struct sw_trace_job *job, struct sw_writer *w);

#endif
