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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TS_CHUNK (2u << 20)          /* the TypeScript reader's reads */
#define TS_ROOM (16u << 20)          /* its room for a cut row */
#define TS_HEADER_ROOM (1u << 20)    /* before the header: no line break */
#define READ_SIZE (8u << 20)
#define SLACK 64

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
    uint64_t ln = *line, rowline = ln;
    bool inq = false;
    int nsep = 0;
    /* Separators go to r->seps once the header is known; before, nowhere. */
    for (size_t p = 0; p < n; p += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(buf + p));
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, comma)),
                         _mm_cmpeq_epi8(v, nl)));
        if (n - p < 16) m &= (1u << (n - p)) - 1;
        while (m) {
            size_t i = p + (size_t)__builtin_ctz(m);
            m &= m - 1;
            uint8_t c = buf[i];
            if (c == '"') {
                inq = !inq;
            } else if (c == ',') {
                if (!inq) {
                    if (r->header && nsep < r->maxsep) r->seps[nsep] = buf + i;
                    nsep++;
                }
            } else {
                ln++;
                if (inq) continue;
                if (cut_too_long(r, base + start, base + i, false, rowline)) return -1;
                if (!row(r, buf + start, buf + i, nsep)) return -1;
                start = i + 1;
                rowline = ln;
                nsep = 0;
            }
        }
    }
    if (eof && start < n) {
        if (cut_too_long(r, base + start, base + n, true, rowline)) return -1;
        if (!row(r, buf + start, buf + n, nsep)) return -1;
        start = n;
    }
    *line = rowline;
    return (long)start;
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
    size_t cap = READ_SIZE;
    uint8_t *buf = malloc(cap + SLACK);
    if (!buf) abort();
    size_t have = 0;     /* bytes in buf: an unfinished row, then new ones */
    uint64_t base = 0;   /* file offset of buf[0] */
    uint64_t line = 1;
    bool ok = true, eof = false;
    while (ok) {
        if (have == cap) {
            /* One row fills the buffer: make room (cut_too_long bounds it). */
            cap *= 2;
            buf = realloc(buf, cap + SLACK);
            if (!buf) abort();
        }
        ssize_t got = read(fd, buf + have, cap - have);
        if (got < 0) {
            if (errno == EINTR) continue;
            sw_fail(err, SW_ERR_IO, "Cannot read %s: %s", label, strerror(errno));
            ok = false;
            break;
        }
        eof = got == 0;
        size_t n = have + (size_t)got;
        memset(buf + n, 0, SLACK);
        long stop = frame(&r, buf, n, base, &line, eof);
        if (stop < 0) {
            ok = false;
            break;
        }
        if (eof) break;
        /* An unfinished row: would the TypeScript reader have given up? */
        if ((size_t)stop < n && cut_too_long(&r, base + (size_t)stop, base + n, false, line)) {
            ok = false;
            break;
        }
        memmove(buf, buf + stop, n - (size_t)stop);
        base += (uint64_t)stop;
        have = n - (size_t)stop;
    }
    if (ok && !r.header) {
        sw_fail(err, SW_ERR_CSV,
                "Not an msMemScope event log: %s is empty; pass a memscope_dump_*.csv file", label);
        ok = false;
    }
    if (ok) rows->bytes += (double)(base + have);
    close(fd);
    free(buf);
    free(r.seps);
    sw_bytes_free(&r.scratch);
    return ok;
}
