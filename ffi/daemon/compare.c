/*
 * compare.c: `stompwatch compare` in native code, for
 * analysis/compare/_native_compare.ts. Reading both logs (compare_log.c,
 * one thread each), aligning each device's ops (myers.c) and writing the
 * CSV's lines took JavaScript 30 to 300 MB/s; here it keeps pace with the
 * disk. The TypeScript side keeps every rule a person reads (the header
 * check, the refusals and their messages, the summary) and calls, in
 * turn:
 *
 *   stompwatch_compare_read  both logs' rows, kept under a handle; counts
 *   stompwatch_compare_diff  the comparison, each device's script
 *   stompwatch_compare_take  its rows, as columns
 *   stompwatch_compare_lines its CSV lines, a buffer at a time
 *   stompwatch_compare_free  forgets the handle
 *
 * A number the CSV would spell otherwise than JavaScript's String() does
 * in integer digits (past 2^53, or not whole) makes the diff answer
 * SW_SCAN_FALLBACK, as the readers do for what they cannot read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "compare_log.h"
#include "csv_frame.h"
#include "myers.h"
#include "sw_common.h"
#include "two_threads.h"

/* Shared with ffi/bindings.ts, field for field. */
struct sw_compare_args {
  int32_t fd[2];
  int32_t col[2][CMP_COLS];
  uint32_t line[2];
  uint32_t levels;
  uint32_t handle; /* out of read (the log that failed, when one did), in of the rest */
  uint64_t offset[2];
  /* Out of read: what each log's StepLog counts. */
  uint64_t aligned[2], device_rows[2];
  uint32_t frameworks[2];
  /* In of diff: the pool ops take their memory from (0: none), and the
   * greedy search's trace budget in bytes. */
  uint32_t framework;
  /* Out of diff. */
  uint32_t texts;
  uint64_t rows, longest_line, text_bytes;
  double budget;
};

_Static_assert(offsetof(struct sw_compare_args, offset) == 80, "layout");
_Static_assert(offsetof(struct sw_compare_args, aligned) == 96, "layout");
_Static_assert(offsetof(struct sw_compare_args, frameworks) == 128, "layout");
_Static_assert(offsetof(struct sw_compare_args, framework) == 136, "layout");
_Static_assert(offsetof(struct sw_compare_args, rows) == 144, "layout");
_Static_assert(sizeof(struct sw_compare_args) == 176, "layout");

/* _step.ts DeviceRows.aligned: each aligned row with the size of the first
 * `pool` row at or after it, names and events through `remap`. */
struct aligned {
  int32_t *names, *events;
  double *memory;
  size_t n;
};

static void aligned_free(struct aligned *x) {
  free(x->names);
  free(x->events);
  free(x->memory);
}

/* One device of the comparison: both sides' aligned rows and the script. */
struct part {
  double device;
  struct aligned a, b;
  struct sw_edits edits;
};

/* One comparison between calls. */
struct cmp_job {
  struct cmp_log log[2];
  /* Each text as a CSV field, text i ending at quoted_end[i]. */
  uint8_t *quoted;
  uint32_t *quoted_end;
  /* Each device's aligned rows and script, devices ascending. */
  struct part *parts;
  size_t nparts;
  /* The next CSV line: edit `edit` of part `part`. */
  size_t part, edit;
};

#define JOBS 16
static struct cmp_job *jobs[JOBS];
static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;

static void job_free(struct cmp_job *j) {
  if (!j) return;
  cmp_log_free(&j->log[0]);
  cmp_log_free(&j->log[1]);
  free(j->quoted);
  free(j->quoted_end);
  for (size_t k = 0; k < j->nparts; k++) {
    aligned_free(&j->parts[k].a);
    aligned_free(&j->parts[k].b);
    sw_edits_free(&j->parts[k].edits);
  }
  free(j->parts);
  free(j);
}

static struct cmp_job *job_of(uint32_t handle) {
  pthread_mutex_lock(&jobs_lock);
  struct cmp_job *j = handle >= 1 && handle <= JOBS ? jobs[handle - 1] : NULL;
  pthread_mutex_unlock(&jobs_lock);
  return j;
}

static void *read_log(void *arg) {
  struct cmp_log *L = arg;
  int32_t result = cmp_log_read(L);
  if (result == SW_SCAN_DONE && !cmp_log_sort(L)) result = -ENOMEM;
  /* The result rides in fd, which is no longer needed. */
  L->fd = result;
  return NULL;
}

/* Whether a log's read ended in a refusal, not done nor left to TypeScript. */
static bool refused(int32_t result) { return result != SW_SCAN_DONE && result != SW_SCAN_FALLBACK; }

/* Reads both logs, each on a thread; the handle and counts into `a`.
 * SW_SCAN_DONE, SW_SCAN_FALLBACK, SW_SCAN_CUT, SW_SCAN_TOO_LONG (its line
 * in the log's `line`) or -errno. */
SW_EXPORT int32_t stompwatch_compare_read(struct sw_compare_args *a) {
  struct cmp_job *j = calloc(1, sizeof *j);
  if (!j) return -ENOMEM;
  for (int s = 0; s < 2; s++) {
    struct cmp_log *L = &j->log[s];
    L->fd = a->fd[s];
    memcpy(L->col, a->col[s], sizeof L->col);
    L->offset = a->offset[s];
    L->line = a->line[s];
    L->levels = a->levels;
  }
  sw_on_both(read_log, &j->log[0], &j->log[1]);
  /* The first log that failed, as the TypeScript reader takes them one
   * after the other; but a log refused (cut, a row that runs on,
   * unreadable) before one left to that reader, which would only read the
   * other whole to refuse it too. */
  int failed = j->log[0].fd != SW_SCAN_DONE ? 0 : 1;
  if (refused(j->log[1].fd) && !refused(j->log[0].fd)) failed = 1;
  int32_t result = j->log[failed].fd;
  a->handle = (uint32_t)failed;
  if (result == SW_SCAN_DONE) {
    pthread_mutex_lock(&jobs_lock);
    result = SW_SCAN_FALLBACK; /* no free handle: the TypeScript pass */
    for (uint32_t h = 0; h < JOBS; h++) {
      if (jobs[h]) continue;
      jobs[h] = j;
      a->handle = h + 1;
      result = SW_SCAN_DONE;
      break;
    }
    pthread_mutex_unlock(&jobs_lock);
  }
  if (result != SW_SCAN_DONE) {
    a->line[failed] = j->log[failed].line;
    job_free(j);
    return result;
  }
  for (int s = 0; s < 2; s++) {
    a->aligned[s] = j->log[s].aligned;
    a->device_rows[s] = j->log[s].device_rows;
    a->frameworks[s] = j->log[s].frameworks;
  }
  return SW_SCAN_DONE;
}

static bool align(const struct cmp_device *d, int pool, const int32_t *remap, struct aligned *out) {
  size_t n = 0;
  for (size_t i = 0; d && i < d->n; i++) n += d->rows[i].kind == CMP_ALIGNED;
  *out = (struct aligned){.n = n};
  out->names = malloc((n ? n : 1) * sizeof *out->names);
  out->events = malloc((n ? n : 1) * sizeof *out->events);
  out->memory = malloc((n ? n : 1) * sizeof *out->memory);
  if (!out->names || !out->events || !out->memory) return false;
  double next = 0;
  for (size_t i = d ? d->n : 0, at = n; i-- > 0;) {
    const struct cmp_row *r = &d->rows[i];
    if (r->kind == pool) {
      next = r->size;
    } else if (r->kind == CMP_ALIGNED) {
      at--;
      out->names[at] = remap ? remap[r->name] : r->name;
      out->events[at] = remap ? remap[r->event] : r->event;
      out->memory[at] = next;
    }
  }
  return true;
}


/* csv.ts csvField of every text, made once: quoted, quotes doubled, when
 * it holds a comma, a quote or a line break. */
static bool quote_texts(struct cmp_job *j) {
  const struct cmp_texts *t = &j->log[0].texts;
  j->quoted = malloc(2 * t->len + 2 * t->count + 1);
  j->quoted_end = malloc((t->count ? t->count : 1) * sizeof *j->quoted_end);
  if (!j->quoted || !j->quoted_end) return false;
  size_t at = 0;
  for (uint32_t i = 0; i < t->count; i++) {
    const uint8_t *s = t->bytes + (i ? t->end[i - 1] : 0), *e = t->bytes + t->end[i];
    bool special = false;
    for (const uint8_t *p = s; p < e && !special; p++) special = *p == '"' || *p == ',' || *p == '\r' || *p == '\n';
    if (special) j->quoted[at++] = '"';
    for (const uint8_t *p = s; p < e; p++) {
      j->quoted[at++] = *p;
      if (special && *p == '"') j->quoted[at++] = '"';
    }
    if (special) j->quoted[at++] = '"';
    j->quoted_end[i] = (uint32_t)at;
  }
  return true;
}

static uint8_t *put_text(const struct cmp_job *j, uint8_t *at, int32_t id) {
  uint32_t from = id ? j->quoted_end[id - 1] : 0;
  memcpy(at, j->quoted + from, j->quoted_end[id] - from);
  return at + (j->quoted_end[id] - from);
}

/* Room a number takes at most, and the rest of a line besides its texts. */
#define NUMBER_ROOM 24
#define LINE_NUMBERS (4 * (NUMBER_ROOM + 1) + 2)

/* "00" to "99": two digits a step. */
static const char PAIRS[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* A number as String() spells it, for the whole numbers below 2^53
 * check_rows lets through; NaN stands for a missing side: N/A. */
static uint8_t *put_number(uint8_t *at, double v) {
  if (isnan(v)) return memcpy(at, "N/A", 3), at + 3;
  char digits[NUMBER_ROOM];
  int64_t n = (int64_t)v;
  uint64_t u = n < 0 ? (uint64_t)(-n) : (uint64_t)n;
  size_t from = sizeof digits;
  for (; u >= 100; u /= 100) from -= 2, memcpy(digits + from, PAIRS + 2 * (u % 100), 2);
  if (u >= 10) from -= 2, memcpy(digits + from, PAIRS + 2 * u, 2);
  else digits[--from] = (char)('0' + u);
  if (n < 0) digits[--from] = '-';
  memcpy(at, digits + from, sizeof digits - from);
  return at + (sizeof digits - from);
}

/* The numbers of one row, and its texts: compare.ts compareSteps' row
 * for edit i of part p. */
struct row_out {
  double numbers[4]; /* device, base, compare, diff; NaN: missing */
  int32_t name, event;
};

static struct row_out row_of(const struct part *p, size_t i) {
  const struct aligned *a = &p->a, *b = &p->b;
  uint8_t kind = p->edits.kind[i];
  double base = kind == SW_EDIT_INSERT ? NAN : a->memory[p->edits.a[i]];
  double compare = kind == SW_EDIT_DELETE ? NAN : b->memory[p->edits.b[i]];
  /* The compare side names the row when it has one. */
  const struct aligned *side = kind == SW_EDIT_DELETE ? a : b;
  uint32_t at = kind == SW_EDIT_DELETE ? p->edits.a[i] : p->edits.b[i];
  return (struct row_out){
      .numbers = {p->device, base, compare, (isnan(compare) ? 0 : compare) - (isnan(base) ? 0 : base)},
      .name = side->names[at],
      .event = side->events[at],
  };
}

static size_t text_bytes(const struct cmp_job *j, int32_t id) {
  return j->quoted_end[id] - (id ? j->quoted_end[id - 1] : 0);
}

/* Whether every row's numbers spell in integer digits as String() does
 * them; the rows and the longest line's bytes. */
static bool check_rows(const struct cmp_job *j, uint64_t *rows, uint64_t *longest) {
  *rows = *longest = 0;
  for (size_t k = 0; k < j->nparts; k++) {
    const struct part *p = &j->parts[k];
    for (size_t i = 0; i < p->edits.n; i++) {
      struct row_out r = row_of(p, i);
      for (int n = 0; n < 4; n++) {
        double v = r.numbers[n];
        if (!isnan(v) && !(fabs(v) < 9007199254740992.0 && v == trunc(v))) return false;
      }
      size_t line = text_bytes(j, r.event) + text_bytes(j, r.name) + LINE_NUMBERS;
      if (line > *longest) *longest = line;
    }
    *rows += p->edits.n;
  }
  return true;
}

static int by_number(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static const struct cmp_device *device_in(const struct cmp_log *L, double number) {
  for (size_t k = 0; k < L->ndev; k++)
    if (L->devices[k].number == number) return &L->devices[k];
  return NULL;
}

/* The devices' scripts, taken one at a time by two threads (sw_on_both):
 * each device's script is its own, and a pair of unrelated steps of two
 * devices spent half its time in one device's search after the other's,
 * the second core idle. Each search keeps its own budget, as one alone. */
struct diff_share {
  struct cmp_job *job;
  int pool;
  const int32_t *remap;
  uint64_t budget;
  _Atomic size_t next;
  _Atomic bool failed;
};

static void *diff_parts(void *v) {
  struct diff_share *s = v;
  const struct cmp_log *base = &s->job->log[0], *next = &s->job->log[1];
  for (size_t k; !atomic_load(&s->failed) && (k = atomic_fetch_add(&s->next, 1)) < s->job->nparts;) {
    struct part *p = &s->job->parts[k];
    bool ok = align(device_in(base, p->device), s->pool, NULL, &p->a);
    ok = align(device_in(next, p->device), s->pool, s->remap, &p->b) && ok;
    if (!ok || !sw_myers(p->a.names, p->a.n, p->b.names, p->b.n, s->budget, SW_MYERS_EXACT_STEPS, &p->edits))
      atomic_store(&s->failed, true);
  }
  return NULL;
}

/* The comparison of the logs read under a->handle, devices ascending:
 * SW_SCAN_DONE (sizes into `a`), SW_SCAN_FALLBACK, or -errno. */
SW_EXPORT int32_t stompwatch_compare_diff(struct sw_compare_args *a) {
  struct cmp_job *j = job_of(a->handle);
  if (!j) return -EINVAL;
  struct cmp_log *base = &j->log[0], *next = &j->log[1];
  /* The compare log's texts as the base log's ids: names compare as ints. */
  int32_t *remap = malloc((next->texts.count ? next->texts.count : 1) * sizeof *remap);
  size_t ndev = base->ndev + next->ndev;
  double *devices = malloc((ndev ? ndev : 1) * sizeof *devices);
  int32_t result = remap && devices ? SW_SCAN_DONE : -ENOMEM;
  for (uint32_t i = 0; result == SW_SCAN_DONE && i < next->texts.count; i++) {
    uint32_t from = i ? next->texts.end[i - 1] : 0;
    remap[i] = cmp_text_id(&base->texts, next->texts.bytes + from, next->texts.end[i] - from);
    if (remap[i] < 0) result = -ENOMEM;
  }
  if (result == SW_SCAN_DONE && !quote_texts(j)) result = -ENOMEM;
  size_t count = 0;
  for (size_t k = 0; result == SW_SCAN_DONE && k < ndev; k++) {
    double number = k < base->ndev ? base->devices[k].number : next->devices[k - base->ndev].number;
    bool seen = false;
    for (size_t i = 0; i < count && !seen; i++) seen = devices[i] == number;
    if (!seen) devices[count++] = number;
  }
  if (devices) qsort(devices, count, sizeof *devices, by_number);
  int pool = a->framework == CMP_PTA || a->framework == CMP_MINDSPORE ? (int)a->framework : -1;
  uint64_t budget = a->budget < 0 ? 0 : (uint64_t)a->budget;
  j->parts = calloc(count ? count : 1, sizeof *j->parts);
  if (!j->parts) result = -ENOMEM;
  if (result == SW_SCAN_DONE) {
    for (size_t k = 0; k < count; k++) j->parts[k].device = devices[k];
    j->nparts = count;
    struct diff_share share = {.job = j, .pool = pool, .remap = remap, .budget = budget};
    if (count > 1) sw_on_both(diff_parts, &share, &share);
    else diff_parts(&share);
    if (atomic_load(&share.failed)) result = -ENOMEM;
  }
  free(remap);
  free(devices);
  /* Written later straight into the caller's arrays (take) and CSV
   * buffer (lines): a copy of our own was 40 MB of fresh pages. */
  if (result == SW_SCAN_DONE && !check_rows(j, &a->rows, &a->longest_line)) result = SW_SCAN_FALLBACK;
  a->texts = base->texts.count;
  a->text_bytes = base->texts.len;
  return result;
}

/* Writes the rows' columns (NaN for a missing side) into arrays of the
 * size diff gave, and the texts their names and events index. */
SW_EXPORT void stompwatch_compare_take(const struct sw_compare_args *a, double *device, double *base, double *compare,
                                       int32_t *name, int32_t *event, uint8_t *text_bytes, uint32_t *text_end) {
  struct cmp_job *j = job_of(a->handle);
  if (!j) return;
  size_t at = 0;
  for (size_t k = 0; k < j->nparts; k++) {
    for (size_t i = 0; i < j->parts[k].edits.n; i++, at++) {
      struct row_out r = row_of(&j->parts[k], i);
      device[at] = r.numbers[0], base[at] = r.numbers[1], compare[at] = r.numbers[2];
      name[at] = r.name, event[at] = r.event;
    }
  }
  const struct cmp_texts *t = &j->log[0].texts;
  memcpy(text_bytes, t->bytes, t->len);
  memcpy(text_end, t->end, t->count * sizeof *text_end);
}

/* The next CSV lines, as many whole ones as `room` bytes of `out` hold
 * (at least diff's longest): the bytes written, 0 once all are. */
SW_EXPORT uint64_t stompwatch_compare_lines(const struct sw_compare_args *a, uint8_t *out, uint64_t room) {
  struct cmp_job *j = job_of(a->handle);
  if (!j) return 0;
  uint8_t *at = out, *end = out + room;
  for (; j->part < j->nparts; j->part++, j->edit = 0) {
    const struct part *p = &j->parts[j->part];
    for (; j->edit < p->edits.n; j->edit++) {
      struct row_out r = row_of(p, j->edit);
      if ((size_t)(end - at) < text_bytes(j, r.event) + text_bytes(j, r.name) + LINE_NUMBERS)
        return (uint64_t)(at - out);
      at = put_text(j, at, r.event);
      *at++ = ',';
      at = put_text(j, at, r.name);
      for (int n = 0; n < 4; n++) {
        *at++ = ',';
        at = put_number(at, r.numbers[n]);
      }
      *at++ = '\n';
    }
  }
  return (uint64_t)(at - out);
}

/* Forgets the handle and what it held. */
SW_EXPORT void stompwatch_compare_free(const struct sw_compare_args *a) {
  pthread_mutex_lock(&jobs_lock);
  struct cmp_job *j = NULL;
  if (a->handle >= 1 && a->handle <= JOBS) {
    j = jobs[a->handle - 1];
    jobs[a->handle - 1] = NULL;
  }
  pthread_mutex_unlock(&jobs_lock);
  job_free(j);
}
