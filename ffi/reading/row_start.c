/*
 * row_start.c: see row_start.h.
 */
#define _GNU_SOURCE
#include "row_start.h"

#include <stdbool.h>
#include <string.h>
#include <unistd.h>

/* Whether [p, e) begins as an event-log row does: "12,MALLOC," (the ID
 * quoted or not). */
static bool looks_like_row(const uint8_t *p, const uint8_t *e) {
  bool quoted = p < e && *p == '"';
  const uint8_t *digits = p + quoted, *q = digits;
  while (q < e && *q >= '0' && *q <= '9') q++;
  if (q == digits || (quoted && (q == e || *q++ != '"')) || q == e || *q != ',') return false;
  const uint8_t *event = ++q;
  while (q < e && ((*q >= 'A' && *q <= 'Z') || *q == '_')) q++;
  return q > event && q < e && *q == ',';
}

uint64_t sw_log_split_point(int fd, uint64_t mid, uint64_t end) {
  uint8_t probe[64 << 10];
  ssize_t got = pread(fd, probe, sizeof probe, (off_t)mid);
  if (got <= 0) return 0;
  const uint8_t *e = probe + got, *first = memchr(probe, '\n', (size_t)got);
  if (!first) return 0;
  const uint8_t *at = first;
  for (const uint8_t *nl = first; nl; nl = memchr(nl + 1, '\n', (size_t)(e - nl - 1))) {
    if (looks_like_row(nl + 1, e)) {
      at = nl;
      break;
    }
  }
  uint64_t start = mid + (uint64_t)(at - probe) + 1;
  return start < end ? start : 0;
}
