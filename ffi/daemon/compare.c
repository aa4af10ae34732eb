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
 *   stompwatch_compare_diff  the comparison, as CSV lines and columns
 *   stompwatch_compare_take  copies them out
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
#include <stdlib.h>
#include <string.h>

#include "compare_log.h"
#include "csv_frame.h"
#include "myers.h"
#include "sw_common.h"

/* Shared with ffi/bindings.ts, field for field. */
struct sw_compare_args {
  int32_t fd[2];
  int32_t col[2][CMP_COLS];
  uint32_t line[2];
  uint32_t levels;
  uint32_t handle; /* out of read, in of the rest */
  uint64_t offset[2];
  /* Out of read: what each log's StepLog counts. */
  uint64_t aligned[2], device_rows[2];
  uint32_t frameworks[2];
  /* In of diff: the pool ops take their memory from (0: none), and the
   * greedy search's trace budget in bytes. */
  uint32_t framework;
  /* Out of diff. */
  uint32_t texts;
  uint64_t rows, csv_bytes, text_bytes;
  double budget;
};

_Static_assert(offsetof(struct sw_compare_args, offset) == 80, "layout");
_Static_assert(offsetof(struct sw_compare_args, aligned) == 96, "layout");
_Static_assert(offsetof(struct sw_compare_args, frameworks) == 128, "layout");
_Static_assert(offsetof(struct sw_compare_args, framework) == 136, "layout");
_Static_assert(offsetof(struct sw_compare_args, rows) == 144, "layout");
_Static_assert(sizeof(struct sw_compare_args) == 176, "layout");

/* One comparison between calls. */
struct cmp_job {
  struct cmp_log log[2];
  uint8_t *csv;
  size_t csv_len, csv_cap;
  /* Each text as a CSV field, text i ending at quoted_end[i]. */
  uint8_t *quoted;
  uint32_t *quoted_end;
  double *device, *base, *compare;
  int32_t *name, *event;
  size_t rows, room;
};

#define JOBS 16
static struct cmp_job *jobs[JOBS];
static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;

static void job_free(struct cmp_job *j) {
  if (!j) return;
  cmp_log_free(&j->log[0]);
  cmp_log_free(&j->log[1]);
  free(j->csv);
  free(j->quoted);
  free(j->quoted_end);
  free(j->device);
  free(j->base);
  free(j->compare);
  free(j->name);
  free(j->event);
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

/* Reads both logs, each on a thread; the handle and counts into `a`.
 * SW_SCAN_DONE, SW_SCAN_FALLBACK or -errno. */
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
  pthread_t other;
  bool threaded = pthread_create(&other, NULL, read_log, &j->log[1]) == 0;
  read_log(&j->log[0]);
  if (threaded) pthread_join(other, NULL);
  else read_log(&j->log[1]);
  int32_t result = j->log[0].fd != SW_SCAN_DONE ? j->log[0].fd : j->log[1].fd;
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

/* _step.ts DeviceRows.aligned: each aligned row with the size of the first
 * `pool` row at or after it, names and events through `remap`. */
struct aligned {
  int32_t *names, *events;
  double *memory;
  size_t n;
};

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

static void aligned_free(struct aligned *x) {
  free(x->names);
  free(x->events);
  free(x->memory);
}

/* Room for n more bytes of CSV. */
static bool reserve(struct cmp_job *j, size_t n) {
  if (j->csv_len + n <= j->csv_cap) return true;
  size_t cap = j->csv_cap ? j->csv_cap : 1 << 20;
  while (cap < j->csv_len + n) cap *= 2;
  uint8_t *csv = realloc(j->csv, cap);
  if (!csv) return false;
  j->csv = csv;
  j->csv_cap = cap;
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

/* Room a number takes at most. */
#define NUMBER_ROOM 24

/* A number as String() spells it, for whole numbers below 2^53; NULL for
 * any other. NaN stands for a missing side: N/A. */
static uint8_t *put_number(uint8_t *at, double v) {
  if (isnan(v)) return memcpy(at, "N/A", 3), at + 3;
  if (!(fabs(v) < 9007199254740992.0) || v != trunc(v)) return NULL;
  char digits[NUMBER_ROOM];
  int64_t n = (int64_t)v;
  uint64_t u = n < 0 ? (uint64_t)(-n) : (uint64_t)n;
  size_t from = sizeof digits;
  do digits[--from] = (char)('0' + u % 10);
  while (u /= 10);
  if (n < 0) digits[--from] = '-';
  memcpy(at, digits + from, sizeof digits - from);
  return at + (sizeof digits - from);
}

/* One line of memory_compare_*.csv; -1 out of memory, 1 a number to
 * spell as JavaScript does (the TypeScript comparison then runs). */
static int put_line(struct cmp_job *j, const double number[4], int32_t name, int32_t event) {
  uint32_t n_from = name ? j->quoted_end[name - 1] : 0, e_from = event ? j->quoted_end[event - 1] : 0;
  if (!reserve(j, j->quoted_end[name] - n_from + j->quoted_end[event] - e_from + 4 * (NUMBER_ROOM + 1) + 2)) return -1;
  uint8_t *at = put_text(j, j->csv + j->csv_len, event);
  *at++ = ',';
  at = put_text(j, at, name);
  for (int k = 0; k < 4 && at; k++) {
    *at++ = ',';
    at = put_number(at, number[k]);
  }
  if (!at) return 1;
  *at++ = '\n';
  j->csv_len = (size_t)(at - j->csv);
  return 0;
}

static bool add_row(struct cmp_job *j, double device, double base, double compare, int32_t name, int32_t event) {
  if (j->rows == j->room) {
    size_t room = j->room ? 2 * j->room : 4096;
    double *dv = realloc(j->device, room * sizeof *dv);
    if (dv) j->device = dv;
    double *bv = realloc(j->base, room * sizeof *bv);
    if (bv) j->base = bv;
    double *cv = realloc(j->compare, room * sizeof *cv);
    if (cv) j->compare = cv;
    int32_t *nv = realloc(j->name, room * sizeof *nv);
    if (nv) j->name = nv;
    int32_t *ev = realloc(j->event, room * sizeof *ev);
    if (ev) j->event = ev;
    if (!dv || !bv || !cv || !nv || !ev) return false;
    j->room = room;
  }
  size_t i = j->rows++;
  j->device[i] = device, j->base[i] = base, j->compare[i] = compare;
  j->name[i] = name, j->event[i] = event;
  return true;
}

/* compare.ts compareSteps' rows of one device, each as a CSV line too;
 * -1 out of memory, 1 a number to fall back on, 0 done. */
static int compare_device(struct cmp_job *j, double device, const struct aligned *a, const struct aligned *b,
                          uint64_t budget) {
  struct sw_edits edits = {0};
  if (!sw_myers(a->names, a->n, b->names, b->n, budget, &edits)) return -1;
  int result = 0;
  for (size_t i = 0; i < edits.n && result == 0; i++) {
    uint8_t kind = edits.kind[i];
    double base = kind == SW_EDIT_INSERT ? NAN : a->memory[edits.a[i]];
    double compare = kind == SW_EDIT_DELETE ? NAN : b->memory[edits.b[i]];
    /* The compare side names the row when it has one. */
    const struct aligned *side = kind == SW_EDIT_DELETE ? a : b;
    uint32_t at = kind == SW_EDIT_DELETE ? edits.a[i] : edits.b[i];
    int32_t name = side->names[at], event = side->events[at];
    double diff = (isnan(compare) ? 0 : compare) - (isnan(base) ? 0 : base);
    const double numbers[4] = {device, base, compare, diff};
    result = add_row(j, device, base, compare, name, event) ? put_line(j, numbers, name, event) : -1;
  }
  sw_edits_free(&edits);
  return result;
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
  for (size_t k = 0; result == SW_SCAN_DONE && k < count; k++) {
    struct aligned x, y;
    bool ok = align(device_in(base, devices[k]), pool, NULL, &x);
    ok = align(device_in(next, devices[k]), pool, remap, &y) && ok;
    int done = ok ? compare_device(j, devices[k], &x, &y, budget) : -1;
    if (done) result = done < 0 ? -ENOMEM : SW_SCAN_FALLBACK;
    aligned_free(&x);
    aligned_free(&y);
  }
  free(remap);
  free(devices);
  a->rows = j->rows;
  a->csv_bytes = j->csv_len;
  a->texts = base->texts.count;
  a->text_bytes = base->texts.len;
  return result;
}

/* Copies the comparison out: the CSV lines, the rows' columns (NaN for a
 * missing side), and the texts their names and events index. */
SW_EXPORT void stompwatch_compare_take(const struct sw_compare_args *a, uint8_t *csv, double *device, double *base,
                                       double *compare, int32_t *name, int32_t *event, uint8_t *text_bytes,
                                       uint32_t *text_end) {
  struct cmp_job *j = job_of(a->handle);
  if (!j) return;
  const struct cmp_texts *t = &j->log[0].texts;
  memcpy(csv, j->csv, j->csv_len);
  memcpy(device, j->device, j->rows * sizeof *device);
  memcpy(base, j->base, j->rows * sizeof *base);
  memcpy(compare, j->compare, j->rows * sizeof *compare);
  memcpy(name, j->name, j->rows * sizeof *name);
  memcpy(event, j->event, j->rows * sizeof *event);
  memcpy(text_bytes, t->bytes, t->len);
  memcpy(text_end, t->end, t->count * sizeof *text_end);
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
