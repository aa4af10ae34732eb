/*
 * csv_reader.c: an event log read with read(2) in large chunks into one
 * reused buffer (a mapping's file pages would count in the RSS), framed
 * into rows 16 bytes at a time (quotes, commas and newlines found with
 * SSE2; a newline inside quotes belongs to its row), the header first.
 *
 * The TypeScript reader reads 2 MiB at a time and gives up on a row still
 * unfinished more than 16 MiB (the header: 1 MiB) past a read's end; its
 * refusals depend only on where those reads end, so they are worked out
 * here from the offsets, with its messages.
 */
#include "analysis.h"

#include <emmintrin.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TS_CHUNK (2u << 20)          /* the TypeScript reader's reads */
#define TS_ROOM (16u << 20)          /* its room for a cut row */
#define TS_HEADER_ROOM (1u << 20)    /* before the header: no line break */
#define READ_SIZE (8u << 20)
#define SLACK 128

struct reader {
    const char *label;
    const struct sw_read_options *opt;
    struct sw_rows *rows;
    struct sw_error *err;
    struct sw_csv_cols cols;
    bool header;
    const uint8_t **seps;
    int maxsep;
    struct sw_bytes scratch;
};

/* Whether the row starting at file offset s, unfinished when the bytes read
 * reach `upto` (`eof`: the file ends there), is one the TypeScript reader
 * refuses. */
static bool cut_too_long(struct reader *r, uint64_t s, uint64_t upto, bool eof, uint64_t line) {
    uint64_t b = eof ? upto : upto / TS_CHUNK * TS_CHUNK;
    if (b <= s) return false;
    if (!r->header && b - s > TS_HEADER_ROOM) {
        sw_fail(r->err, SW_ERR_CSV,
                "Not a CSV file: %s has no line break in its first MiB; pass an msMemScope event log (memscope_dump_*.csv)",
                r->label);
        return true;
    }
    if (b - s > TS_ROOM) {
        sw_fail(r->err, SW_ERR_CSV,
                "Row at line %llu of %s runs on for over 16 MiB (an unbalanced quote?); check the file is a complete msMemScope log",
                (unsigned long long)line, r->label);
        return true;
    }
    return false;
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
        return true;
    }
    struct sw_csv_row cr = {s, e, r->seps, nsep < r->maxsep ? nsep : r->maxsep};
    sw_memory_row(r->rows, &r->cols, r->opt, &cr, &r->scratch);
    return true;
}

/*
 * Frames the rows of buf [0, n) (buf[n..n+SLACK) readable), buf[0] being
 * file offset `base`. Returns the offset in buf of the first unfinished row
 * (n when none), or -1 on a refusal. `line`: line number of the first row,
 * updated to that of the unfinished one.
 */
static long frame(struct reader *r, const uint8_t *buf, size_t n, uint64_t base, uint64_t *line,
                  bool eof) {
    const __m128i quote = _mm_set1_epi8('"'), comma = _mm_set1_epi8(','), nl = _mm_set1_epi8('\n');
    size_t start = 0;
    uint64_t lines = *line; /* line number at the block's first byte */
    uint64_t rowline = lines;
    uint64_t inq = 0; /* all ones while inside quotes */
    int nsep = 0;
    for (size_t p = 0; p < n; p += 64) {
        uint64_t mq = 0, mc = 0, mn = 0;
        for (int k = 0; k < 4; k++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(buf + p + 16 * k));
            mq |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)) << (16 * k);
            mc |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, comma)) << (16 * k);
            mn |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) << (16 * k);
        }
        if (n - p < 64) {
            uint64_t keep = (1ull << (n - p)) - 1;
            mq &= keep;
            mc &= keep;
            mn &= keep;
        }
        /* Bit i of x: an odd number of quotes at or before byte i (as
         * simdjson finds the bytes inside strings). */
        uint64_t x = mq;
        x ^= x << 1;
        x ^= x << 2;
        x ^= x << 4;
        x ^= x << 8;
        x ^= x << 16;
        x ^= x << 32;
        uint64_t inside = x ^ inq;
        inq = (uint64_t)-(int64_t)(inside >> 63);
        uint64_t ends = mn & ~inside;
        uint64_t m = (mc & ~inside) | ends;
        while (m) {
            unsigned bit = (unsigned)__builtin_ctzll(m);
            m &= m - 1;
            size_t i = p + bit;
            if (!((ends >> bit) & 1)) {
                if (r->header && nsep < r->maxsep) r->seps[nsep] = buf + i;
                nsep++;
                continue;
            }
            if (cut_too_long(r, base + start, base + i, false, rowline)) return -1;
            if (!row(r, buf + start, buf + i, nsep)) return -1;
            start = i + 1;
            /* Every newline counts, quoted ones too. */
            rowline = lines + (uint64_t)__builtin_popcountll(mn & ((2ull << bit) - 1));
            nsep = 0;
        }
        lines += (uint64_t)__builtin_popcountll(mn);
    }
    if (eof && start < n) {
        if (cut_too_long(r, base + start, base + n, true, rowline)) return -1;
        if (!row(r, buf + start, buf + n, nsep)) return -1;
        start = n;
    }
    *line = rowline;
    return (long)start;
}

/*
 * Reading runs one chunk ahead on a thread of its own: two buffers, each
 * with room in front for the row the previous chunk cut (at most 18 MiB
 * before the TypeScript reader gives up on it: cut_too_long).
 */
#define ROOM (20u << 20)

struct prefetch {
    int fd;
    uint8_t *mem[2];
    size_t got[2];
    int error[2];
    bool filled[2], stop;
    pthread_mutex_t lock;
    pthread_cond_t cond;
};

static uint8_t *data_of(struct prefetch *pf, int k) { return pf->mem[k] + ROOM; }

static void *reader_main(void *arg) {
    struct prefetch *pf = arg;
    for (int k = 0;; k ^= 1) {
        pthread_mutex_lock(&pf->lock);
        while (pf->filled[k] && !pf->stop) pthread_cond_wait(&pf->cond, &pf->lock);
        bool stop = pf->stop;
        pthread_mutex_unlock(&pf->lock);
        if (stop) return NULL;
        uint8_t *p = data_of(pf, k);
        size_t n = 0;
        int error = 0;
        while (n < READ_SIZE) {
            ssize_t got = read(pf->fd, p + n, READ_SIZE - n);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) error = errno;
            if (got <= 0) break;
            n += (size_t)got;
        }
        pthread_mutex_lock(&pf->lock);
        pf->got[k] = n;
        pf->error[k] = error;
        pf->filled[k] = true;
        pthread_cond_broadcast(&pf->cond);
        pthread_mutex_unlock(&pf->lock);
        if (n == 0 || error) return NULL;
    }
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
    struct reader r = {.label = label, .opt = opt, .rows = rows, .err = err};
    struct prefetch pf = {.fd = fd};
    pthread_mutex_init(&pf.lock, NULL);
    pthread_cond_init(&pf.cond, NULL);
    for (int k = 0; k < 2; k++) {
        pf.mem[k] = malloc(ROOM + READ_SIZE + SLACK);
        if (!pf.mem[k]) abort();
    }
    pthread_t thread;
    if (pthread_create(&thread, NULL, reader_main, &pf) != 0) abort();
    size_t tail = 0;   /* bytes of a cut row in front of the chunk */
    uint64_t base = 0; /* file offset of the cut row's first byte */
    uint64_t line = 1;
    bool ok = true;
    for (int k = 0;; k ^= 1) {
        pthread_mutex_lock(&pf.lock);
        while (!pf.filled[k]) pthread_cond_wait(&pf.cond, &pf.lock);
        size_t got = pf.got[k];
        int error = pf.error[k];
        pthread_mutex_unlock(&pf.lock);
        if (error) {
            sw_fail(err, SW_ERR_IO, "Cannot read %s: %s", label, strerror(error));
            ok = false;
            break;
        }
        bool eof = got == 0;
        uint8_t *buf = data_of(&pf, k) - tail;
        size_t n = tail + got;
        memset(buf + n, 0, SLACK);
        long stop = frame(&r, buf, n, base, &line, eof);
        if (stop < 0) {
            ok = false;
            break;
        }
        if (eof) {
            base += (uint64_t)n;
            break;
        }
        /* An unfinished row: would the TypeScript reader have given up? */
        if ((size_t)stop < n && cut_too_long(&r, base + (size_t)stop, base + n, false, line)) {
            ok = false;
            break;
        }
        tail = n - (size_t)stop;
        if (tail > ROOM) abort(); /* cut_too_long refuses such rows first */
        memcpy(data_of(&pf, k ^ 1) - tail, buf + stop, tail);
        base += (uint64_t)stop;
        pthread_mutex_lock(&pf.lock);
        pf.filled[k] = false;
        pthread_cond_broadcast(&pf.cond);
        pthread_mutex_unlock(&pf.lock);
    }
    pthread_mutex_lock(&pf.lock);
    pf.stop = true;
    pthread_cond_broadcast(&pf.cond);
    pthread_mutex_unlock(&pf.lock);
    pthread_join(thread, NULL);
    if (ok && !r.header) {
        sw_fail(err, SW_ERR_CSV,
                "Not an msMemScope event log: %s is empty; pass a memscope_dump_*.csv file", label);
        ok = false;
    }
    if (ok) rows->bytes += (double)base;
    close(fd);
    for (int k = 0; k < 2; k++) free(pf.mem[k]);
    pthread_mutex_destroy(&pf.lock);
    pthread_cond_destroy(&pf.cond);
    free(r.seps);
    sw_bytes_free(&r.scratch);
    return ok;
}
