/*
 * event_rows.c: the daemon's MALLOC, FREE and OOM_DETAIL rows of the event
 * log (SPEC section 2), formatted natively. These are most of the log, and
 * the log must keep up with a million events a second: in the daemon's
 * JavaScript a row of ten numbers costs about half a microsecond, here a
 * tenth of that. analysis/memscope_csv/event_rows.ts is the reference; a test holds
 * the two to the same bytes. Part of the daemon-side library: a job never
 * loads it.
 */
#include <string.h>

#include "stompwatch_ring.h"
#include "sw_common.h"

enum { ROW_MALLOC = 0, ROW_FREE = 1, ROW_OOM = 2 };

static const char DIGIT_PAIRS[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static uint8_t *put_str(uint8_t *p, const char *s, size_t n) {
  memcpy(p, s, n);
  return p + n;
}
#define PUT(p, lit) put_str((p), (lit), sizeof(lit) - 1)

static uint8_t *put_u64(uint8_t *p, uint64_t v) {
  uint8_t tmp[20];
  uint8_t *t = tmp + sizeof tmp;
  while (v >= 100) {
    unsigned r = (unsigned)(v % 100) * 2;
    v /= 100;
    *--t = (uint8_t)DIGIT_PAIRS[r + 1];
    *--t = (uint8_t)DIGIT_PAIRS[r];
  }
  if (v >= 10) {
    *--t = (uint8_t)DIGIT_PAIRS[v * 2 + 1];
    *--t = (uint8_t)DIGIT_PAIRS[v * 2];
  } else {
    *--t = (uint8_t)('0' + v);
  }
  return put_str(p, (const char *)t, (size_t)(tmp + sizeof tmp - t));
}

/* The daemon's numbers are doubles holding integers (timestamps above 2^53
 * included): written as the exact integer each double holds, as
 * row_writer.ts's putInt writes them. */
static uint8_t *put_int(uint8_t *p, double v) {
  if (v < 0) {
    *p++ = '-';
    v = -v;
  }
  return put_u64(p, (uint64_t)v);
}

static uint8_t *put_hex16(uint8_t *p, double addr) {
  static const char hex[] = "0123456789abcdef";
  uint64_t v = (uint64_t)addr;
  *p++ = '0';
  *p++ = 'x';
  for (int i = 15; i >= 0; i--, v >>= 4) p[i] = (uint8_t)hex[v & 15];
  return p + 16;
}

/*
 * Appends one row at out + at and returns the position after it; `out`
 * must have 400 bytes free there. `event` is ROW_*, `pool` 0 HAL, 1 HOST,
 * 2 PTA, `device` -1 for the host ("cpu").
 */
SW_EXPORT uint32_t stompwatch_memory_row(uint8_t *out, uint32_t at, uint32_t event, uint32_t pool, double id,
                                         double ts, int32_t pid, uint32_t tid, int32_t device, double addr,
                                         double allocation_id, double size, double used, int32_t result) {
  uint8_t *p = put_int(out + at, id);
  *p++ = ',';
  if (event == ROW_MALLOC)
    p = PUT(p, "MALLOC,");
  else if (event == ROW_FREE)
    p = PUT(p, "FREE,");
  else
    p = PUT(p, "OOM_DETAIL,");
  if (pool == SW_POOL_HOST)
    p = PUT(p, "HOST,N/A,");
  else if (pool == SW_POOL_PTA)
    p = PUT(p, "PTA,N/A,");
  else
    p = PUT(p, "HAL,N/A,");
  p = put_int(p, ts);
  *p++ = ',';
  p = put_int(p, pid);
  *p++ = ',';
  p = put_int(p, tid);
  *p++ = ',';
  if (device < 0)
    p = PUT(p, "cpu");
  else
    p = put_int(p, device);
  *p++ = ',';
  if (event == ROW_OOM) {
    p = PUT(p, "N/A,\"{size:");
    p = put_int(p, size);
    p = PUT(p, ",error:");
    p = put_int(p, result);
    p = PUT(p, ",device_free:");
    p = put_int(p, addr);
  } else {
    uint8_t *ptr = p;
    p = put_hex16(p, addr);
    p = PUT(p, ",\"{allocation_id:");
    p = put_int(p, allocation_id);
    p = PUT(p, ",addr:");
    p = put_str(p, (const char *)ptr, 18);
    p = PUT(p, ",size:");
    p = put_int(p, size);
  }
  p = PUT(p, ",used:");
  p = put_int(p, used);
  p = PUT(p, "}\",,\n");
  return (uint32_t)(p - out);
}
