/*
 * compare_log.h: what compare keeps of one event log, read natively
 * (compare_log.c), as analysis/compare/_step.ts keeps it: per numeric
 * device, the aligned rows (ops or kernels of the level) and the
 * framework pools' memory rows, with names and events as text ids.
 */
#ifndef STOMPWATCH_COMPARE_LOG_H
#define STOMPWATCH_COMPARE_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Row kinds, and the framework bits of cmp_log.frameworks. */
enum { CMP_ALIGNED = 0, CMP_PTA = 1, CMP_MINDSPORE = 2 };

/* Columns read, as indices into cmp_log.col. */
enum { CMP_ID, CMP_EVENT, CMP_TYPE, CMP_NAME, CMP_TS, CMP_DEVICE, CMP_ATTR, CMP_COLS };

/* Level bits. */
enum { CMP_LEVEL_OP = 1, CMP_LEVEL_KERNEL = 2 };

/* A kept row: a pool row's size, or an aligned row's texts (32 bytes: a
 * million of them are written, sorted and read again). */
struct cmp_row {
  double time, id;
  union {
    double size;
    struct {
      int32_t name, event;
    };
  };
  uint8_t kind;
};

struct cmp_device {
  double number;
  struct cmp_row *rows;
  size_t n, cap;
};

/* Texts (as UTF-8, each once) and their ids. */
struct cmp_texts {
  uint8_t *bytes;
  size_t len, cap;
  uint32_t *end; /* text i is bytes[end[i - 1], end[i]) */
  uint32_t count, room;
  uint32_t *slot; /* id + 1 by hash, 0 empty */
  uint32_t mask;
};

struct cmp_log {
  /* In: the file, where its data rows start, the columns, the levels. */
  int fd;
  int32_t col[CMP_COLS];
  uint64_t offset;
  uint32_t line, levels;
  /* Out: what _step.ts StepLog counts. */
  uint32_t frameworks;
  uint64_t aligned, device_rows;
  struct cmp_device *devices;
  size_t ndev, devroom;
  struct cmp_texts texts;
  /* Internal. */
  double first_second;
  int last_device; /* -1 not numeric, -3 none yet */
  size_t last_len;
  bool last_quoted;
  uint8_t last_bytes[64];
  uint8_t *scratch;
  size_t scratch_room;
  /* The last Event text and its id: aligned rows share one or two. */
  int32_t last_event;
  size_t last_event_len;
  uint8_t last_event_bytes[32];
};

/* Reads the rows of L's file: SW_SCAN_DONE, SW_SCAN_FALLBACK (a row it
 * cannot read as the TypeScript reader would for certain), SW_SCAN_CUT,
 * SW_SCAN_TOO_LONG (L->line then the line of the row that runs on), or
 * -errno. */
int32_t cmp_log_read(struct cmp_log *L);

/* Sorts each device's rows by time, then ID, as _step.ts #order does. */
bool cmp_log_sort(struct cmp_log *L);

/* The id of text [s, s + n) in t, added when new; -1 when out of memory. */
int32_t cmp_text_id(struct cmp_texts *t, const uint8_t *s, size_t n);

void cmp_log_free(struct cmp_log *L);

#endif
