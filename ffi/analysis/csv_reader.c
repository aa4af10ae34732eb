/*
 * csv_reader.c: an event log read through a mapping (reading/mapped_log.h;
 * the pages read are let go of as it goes, so the log never counts in the
 * process's memory), framed into rows 64 bytes at a time (reading/
 * csv_masks.h: a newline inside quotes belongs to its row), the header
 * first.
 *
 * A large file is read by two threads, each from its half: the second
 * starts after the first newline past the middle, taken as a row start;
 * when the first thread's rows turn out not to end there (a quoted field
 * with a newline across the middle), its work is dropped and the first
 * thread reads on.
 *
 * The TypeScript reader reads 2 MiB at a time and gives up on a row still
 * unfinished more than 16 MiB (the header: 1 MiB) past a read's end; its
 * refusals depend only on where those reads end, so they are worked out
 * here from the offsets, with its messages.
 */
#include "analysis.h"
#include "csv_masks.h"
#include "mapped_log.h"
#include "row_start.h"
#include "ts_row_room.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TS_HEADER_ROOM (1u << 20)    /* the TypeScript reader's, before the header */
/* The steps the mapped log is framed in. */
#define READ_SIZE (1u << 20)
#define SPLIT_MIN (32u << 20) /* smaller files: one thread */

struct reader {
    const char *label;
    int fd;
    const struct sw_read_options *opt;
    struct sw_rows *rows;
    struct sw_error *err;
    struct sw_csv_cols cols;
    bool header;
    const uint8_t **seps;
    int maxsep;
    struct sw_bytes scratch;
    uint64_t limit; /* rows starting here or later are another reader's */
    bool reached;
    /* The second reader waits for the first one's header. */
    pthread_mutex_t *lock;
    pthread_cond_t *cond;
    int *header_state; /* 0 not yet, 1 read, -1 never */
};

/* 1 + the newlines before offset s: the line a row starting there is on
 * (counted only for a message). */
static uint64_t line_at(int fd, uint64_t s) {
    uint8_t buf[1 << 16];
    uint64_t lines = 1, at = 0;
    while (at < s) {
        size_t want = s - at < sizeof buf ? (size_t)(s - at) : sizeof buf;
        ssize_t got = pread(fd, buf, want, (off_t)at);
        if (got <= 0) break;
        for (ssize_t i = 0; i < got; i++) lines += buf[i] == '\n';
        at += (uint64_t)got;
    }
    return lines;
}

/* Whether the row starting at file offset s, unfinished when the bytes read
 * reach `upto` (`eof`: the file ends there), is one the TypeScript reader
 * refuses. */
static bool cut_too_long(struct reader *r, uint64_t s, uint64_t upto, bool eof) {
    uint64_t b = eof ? upto : upto / SW_TS_CHUNK * SW_TS_CHUNK;
    if (b <= s) return false;
    if (!r->header && b - s > TS_HEADER_ROOM) {
        sw_fail(r->err, SW_ERR_CSV,
                "Not a CSV file: %s has no line break in its first MiB; pass an msMemScope event log (memscope_dump_*.csv)",
                r->label);
        return true;
    }
    if (sw_ts_refuses_row(s, upto, eof)) {
        sw_fail(r->err, SW_ERR_CSV,
                "Row at line %llu of %s runs on for over 16 MiB (an unbalanced quote?); check the file is a complete msMemScope log",
                (unsigned long long)line_at(r->fd, s), r->label);
        return true;
    }
    return false;
}

static void header_known(struct reader *r, int state) {
    if (!r->lock) return;
    pthread_mutex_lock(r->lock);
    *r->header_state = state;
    pthread_cond_broadcast(r->cond);
    pthread_mutex_unlock(r->lock);
}

/* A whole row [s, e): the header, or a data row. */
static bool row(struct reader *r, const uint8_t *s, const uint8_t *e, int nsep) {
    if (e > s && e[-1] == '\r') e--;
    if (e <= s) return true;
    if (!r->header) {
        if (e - s >= 3 && s[0] == 0xef && s[1] == 0xbb && s[2] == 0xbf) s += 3;
        if (!sw_csv_header(s, e, r->label, &r->cols, r->err)) return false;
        r->header = true;
        r->maxsep = r->cols.maxcol + 1;
        r->seps = malloc((size_t)r->maxsep * sizeof *r->seps);
        if (!r->seps) abort();
        header_known(r, 1);
        return true;
    }
    struct sw_csv_row cr = {s, e, r->seps, nsep < r->maxsep ? nsep : r->maxsep};
    sw_memory_row(r->rows, &r->cols, r->opt, &cr, &r->scratch);
    return true;
}

/* The row being framed: its separators so far, how many are kept (up to
 * the last column read, none before the header), and whether it is read. */
struct row_state {
    uint32_t nsep, keep;
    uint32_t event_sep; /* the separator before Event, counted from 1; 0: none */
    bool skip;
};

static inline void row_begins(const struct reader *r, struct row_state *st) {
    st->nsep = 0;
    st->skip = false;
    st->keep = r->header ? (uint32_t)r->maxsep : 0;
    st->event_sep = r->header && r->cols.event > 0 ? (uint32_t)r->cols.event : 0;
}

/* Takes the separators b + each bit of m. A row whose Event cannot be
 * MALLOC, FREE or OOM_DETAIL (unquoted, and its first two bytes begin none
 * of them) is told at the separator before Event and is then left unread:
 * no more of its separators are kept. */
static inline __attribute__((always_inline)) void take_seps(struct reader *r, struct row_state *st,
                                                            const uint8_t *b, uint64_t m) {
    for (; m && st->nsep < st->keep; m &= m - 1) {
        const uint8_t *at = b + __builtin_ctzll(m);
        r->seps[st->nsep++] = at;
        if (st->nsep != st->event_sep) continue;
        /* Two bytes tell MALLOC from MSTX, OOM_DETAIL from OP_LAUNCH (the
         * slack makes both readable). */
        const uint16_t two = (uint16_t)(at[1] | at[2] << 8);
        st->skip = at[1] != '"' && two != ('M' | 'A' << 8) && two != ('F' | 'R' << 8) &&
                   two != ('O' | 'O' << 8);
        if (st->skip) st->keep = 0;
    }
}

/*
 * Frames the rows of buf [0, n) (64 bytes past it readable), buf[0] being
 * file offset `base`. Returns the offset in buf of the first row not
 * handled (unfinished, or past r->limit: r->reached), or -1 on a refusal.
 */
static inline __attribute__((always_inline)) long frame_with(struct reader *r, const uint8_t *buf,
                                                             size_t n, uint64_t base, bool eof,
                                                             const bool avx2) {
    size_t start = 0;
    uint64_t inq = 0; /* all ones while inside quotes */
    struct row_state st;
    row_begins(r, &st);
    for (size_t p = 0; p < n; p += 64) {
        const uint8_t *b = buf + p;
        struct sw_csv_block blk =
            sw_csv_block_of(sw_csv_masks(b, n - p < 64 ? n - p : 64, avx2), &inq);
        while (blk.ends) { /* row by row (sw_csv_next_end) */
            const struct sw_csv_end end = sw_csv_next_end(&blk);
            take_seps(r, &st, b, end.seps);
            const size_t i = p + end.bit;
            if (cut_too_long(r, base + start, base + i, false)) return -1;
            if (!st.skip && !row(r, buf + start, buf + i, (int)st.nsep)) return -1;
            start = i + 1;
            row_begins(r, &st);
            if (base + start >= r->limit) {
                r->reached = true;
                return (long)start;
            }
        }
        take_seps(r, &st, b, blk.seps);
    }
    if (eof && start < n) {
        if (cut_too_long(r, base + start, base + n, true)) return -1;
        if (!st.skip && !row(r, buf + start, buf + n, (int)st.nsep)) return -1;
        start = n;
    }
    return (long)start;
}

/* The step inlined in each, as in daemon/csv_frame.c: a call per 64 bytes
 * to the AVX2 masks cost a tenth of the read. */
#if defined(__x86_64__)
__attribute__((target("avx2,popcnt,bmi"), flatten)) static long frame_avx2(struct reader *r,
                                                                           const uint8_t *buf,
                                                                           size_t n, uint64_t base,
                                                                           bool eof) {
    return frame_with(r, buf, n, base, eof, true);
}
#endif

static long frame(struct reader *r, const uint8_t *buf, size_t n, uint64_t base, bool eof) {
#if defined(__x86_64__)
    if (sw_csv_avx2()) return frame_avx2(r, buf, n, base, eof);
#endif
    return frame_with(r, buf, n, base, eof, false);
}

/* read_rows over a mapped log, in READ_SIZE steps (the TypeScript reader's
 * refusals are worked out from where its reads end, not these). */
struct mapped_rows {
    struct reader *r;
    struct sw_mapped_log *m;
    int64_t next;
};

static void read_mapped(void *arg) {
    struct mapped_rows *j = arg;
    struct reader *r = j->r;
    struct sw_mapped_log *m = j->m;
    uint64_t base = m->from, end = m->from;
    j->next = -1;
    for (;;) {
        uint64_t more = m->size - end < READ_SIZE ? m->size - end : READ_SIZE;
        bool eof = more == 0; /* as a read that got nothing */
        end += more;
        size_t n = (size_t)(end - base);
        long stop = frame(r, m->bytes + (base - m->from), n, base, eof);
        if (stop < 0) return;
        if (r->reached || eof) {
            j->next = (int64_t)(base + (uint64_t)stop);
            return;
        }
        if ((size_t)stop < n && cut_too_long(r, base + (uint64_t)stop, base + n, false)) return;
        base += (uint64_t)stop;
        sw_mapped_log_release(m, base);
    }
}

/* Reads and handles the rows starting at `from` (a row start) up to the
 * end or r->limit; returns the offset of the first row left (the file's
 * end when none), or -1 on a refusal. */
static int64_t read_rows(struct reader *r, uint64_t from) {
    struct sw_mapped_log m;
    if (!sw_mapped_log_open(r->fd, from, &m)) {
        sw_fail(r->err, SW_ERR_IO,
                "Cannot read %s: its file system cannot map it; copy it to a local disk and run again",
                r->label);
        return -1;
    }
    struct mapped_rows job = {.r = r, .m = &m};
    enum sw_mapped_end end = sw_mapped_run(&m, read_mapped, &job);
    sw_mapped_log_close(&m);
    if (end == SW_MAPPED_WHOLE) return job.next;
    /* Whatever the zeros read past the cut made the reader say is moot. */
    r->err->kind = SW_OK;
    if (end == SW_MAPPED_CUT)
        sw_fail(r->err, SW_ERR_IO,
                "Cannot read %s: it got shorter while it was read (cut by whoever writes it); run again once the log is complete",
                r->label);
    else
        sw_fail(r->err, SW_ERR_IO, "Cannot read %s: %s", r->label, strerror(EIO));
    return -1;
}

struct second {
    struct reader r;
    struct sw_rows rows;
    struct sw_error err;
    const struct reader *first;
    uint64_t from;
    int64_t next;
};

static void *second_main(void *arg) {
    struct second *b = arg;
    pthread_mutex_lock(b->r.lock);
    while (*b->r.header_state == 0) pthread_cond_wait(b->r.cond, b->r.lock);
    int state = *b->r.header_state;
    pthread_mutex_unlock(b->r.lock);
    if (state < 0) return NULL;
    b->r.cols = b->first->cols;
    b->r.header = true;
    b->r.maxsep = b->r.cols.maxcol + 1;
    b->r.seps = malloc((size_t)b->r.maxsep * sizeof *b->r.seps);
    if (!b->r.seps) abort();
    b->next = read_rows(&b->r, b->from);
    return NULL;
}

/* Where a second reader may start (row_start.h), or 0 for none. */
static uint64_t split_point(int fd, uint64_t size) {
    return size < SPLIT_MIN ? 0 : sw_log_split_point(fd, size / 2, size);
}

bool sw_read_memory_rows(const char *path, const char *label, const struct sw_read_options *opt,
                         struct sw_rows *rows, struct sw_error *err) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        sw_fail(err, SW_ERR_IO, "Cannot read %s: %s", label, strerror(errno));
        return false;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        sw_fail(err, SW_ERR_IO,
                "Cannot read %s: not a file; pass the path of an msMemScope event log (memscope_dump_*.csv)",
                label);
        return false;
    }
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
    int header_state = 0;
    struct reader a = {.label = label, .fd = fd, .opt = opt, .rows = rows, .err = err,
                       .limit = UINT64_MAX};
    uint64_t split = split_point(fd, (uint64_t)st.st_size);
    struct second b = {.first = &a, .from = split, .next = -1};
    pthread_t thread;
    bool two = false;
    if (split) {
        a.limit = split;
        a.lock = &lock;
        a.cond = &cond;
        a.header_state = &header_state;
        sw_rows_init(&b.rows);
        b.r = (struct reader){.label = label, .fd = fd, .opt = opt, .rows = &b.rows,
                              .err = &b.err, .limit = UINT64_MAX, .lock = &lock,
                              .cond = &cond, .header_state = &header_state};
        two = pthread_create(&thread, NULL, second_main, &b) == 0;
        if (!two) {
            a.limit = UINT64_MAX;
            a.lock = NULL;
        }
    }
    int64_t next = read_rows(&a, 0);
    if (two) {
        if (!a.header) header_known(&a, -1);
        pthread_join(thread, NULL);
        if (next >= 0 && (uint64_t)next == split && a.reached) {
            /* The first reader's rows end where the second one's begin. */
            if (b.next < 0) {
                *err = b.err;
                next = -1;
            } else {
                sw_rows_take(rows, &b.rows);
                next = b.next;
            }
        } else if (next >= 0 && a.reached) {
            /* A quoted newline across the middle: read on alone. */
            a.limit = UINT64_MAX;
            a.reached = false;
            next = read_rows(&a, (uint64_t)next);
        }
        sw_rows_free(&b.rows);
        free(b.r.seps);
        sw_bytes_free(&b.r.scratch);
    }
    bool ok = next >= 0;
    if (ok && !a.header) {
        sw_fail(err, SW_ERR_CSV,
                "Not an msMemScope event log: %s is empty; pass a memscope_dump_*.csv file", label);
        ok = false;
    }
    if (ok) rows->bytes += (double)next;
    close(fd);
    free(a.seps);
    sw_bytes_free(&a.scratch);
    return ok;
}
