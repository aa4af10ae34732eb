/*
 * watch_spec.c: the one grammar of a --watch value,
 * `[start[:outid]],end[,full-content]`, as msMemScope accepts it. The hook
 * reads STOMPWATCH_WATCH with it; the daemon's command line calls the same
 * function through FFI (daemon/watch_spec.ts) to refuse a bad value before
 * the job starts, so what `run` accepts is exactly what the hook watches.
 *
 * Fields are separated by `,` or the full-width `，` (U+FF0C); start:outid
 * is split at the last colon, so op names may hold colons when an outid
 * follows (`aten::add:0`). An op name may not start or end with whitespace
 * (as JavaScript's trim() sees it), hold a control character, or be longer
 * than the ring's SW_OP_NAME_MAX - 1 bytes.
 */
#include <string.h>

#include "stompwatch_ring.h"
#include "sw_common.h"

#define MAX_FIELDS 3

/* Length of the separator at value[i], or 0. */
static size_t separator_at(const char *value, size_t len, size_t i) {
  if (value[i] == ',') return 1;
  if (i + 3 <= len && (unsigned char)value[i] == 0xef && (unsigned char)value[i + 1] == 0xbc &&
      (unsigned char)value[i + 2] == 0x8c)
    return 3;
  return 0;
}

/* The code point of the UTF-8 sequence of `n` bytes at `p`; -1 if invalid. */
static long decode(const unsigned char *p, size_t n) {
  if (n == 1) return p[0] < 0x80 ? p[0] : -1;
  long cp = n == 2 ? (p[0] & 0x1f) : n == 3 ? (p[0] & 0x0f) : (p[0] & 0x07);
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xc0) != 0x80) return -1;
    cp = (cp << 6) | (p[i] & 0x3f);
  }
  return cp;
}

static size_t sequence_length(unsigned char lead) {
  return lead < 0x80 ? 1 : (lead & 0xe0) == 0xc0 ? 2 : (lead & 0xf0) == 0xe0 ? 3 : (lead & 0xf8) == 0xf0 ? 4 : 0;
}

/* What String.prototype.trim() removes: WhiteSpace and LineTerminator. */
static int is_js_space(long cp) {
  return (cp >= 0x09 && cp <= 0x0d) || cp == 0x20 || cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000 || cp == 0xfeff;
}

static int first_is_space(const unsigned char *p, size_t len) {
  size_t n = sequence_length(p[0]);
  return n && n <= len && is_js_space(decode(p, n));
}

static int last_is_space(const unsigned char *p, size_t len) {
  size_t start = len - 1;
  while (start > 0 && len - start < 4 && (p[start] & 0xc0) == 0x80) start--;
  size_t n = sequence_length(p[start]);
  return n == len - start && is_js_space(decode(p + start, n));
}

/* 0, or the error (`whitespace`, then +1 control, +2 too long) of one op name. */
static uint32_t check_name(const char *name, size_t len, uint32_t whitespace) {
  const unsigned char *p = (const unsigned char *)name;
  if (len && (first_is_space(p, len) || last_is_space(p, len))) return whitespace;
  for (size_t i = 0; i < len; i++)
    if (p[i] < 0x20 || p[i] == 0x7f) return whitespace + 1;
  return len > SW_OP_NAME_MAX - 1 ? whitespace + 2 : 0;
}

static uint32_t fail(struct sw_watch_spec *out, uint32_t error, size_t at, size_t len) {
  out->detail_at = (uint32_t)at;
  out->detail_len = (uint32_t)len;
  return out->error = error;
}

static uint32_t parse_outid(const char *text, size_t at, size_t len, struct sw_watch_spec *out) {
  if (len == 0) return fail(out, SW_SPEC_ERR_OUTID_MISSING, at, 0);
  for (size_t i = 0; i < len; i++)
    if (text[at + i] < '0' || text[at + i] > '9') return fail(out, SW_SPEC_ERR_OUTID_NOT_NUMBER, at, len);
  if (len > 1 && text[at] == '0') return fail(out, SW_SPEC_ERR_OUTID_LEADING_ZERO, at, len);
  uint64_t v = 0;
  for (size_t i = 0; i < len && v <= SW_SPEC_MAX_OUTID; i++) v = v * 10 + (uint64_t)(text[at + i] - '0');
  if (v > SW_SPEC_MAX_OUTID) return fail(out, SW_SPEC_ERR_OUTID_TOO_LARGE, at, len);
  out->outid = (uint32_t)v;
  return SW_SPEC_OK;
}

uint32_t sw_watch_spec_parse(const char *value, size_t len, struct sw_watch_spec *out) {
  memset(out, 0, sizeof *out);
  if (len > UINT32_MAX) len = UINT32_MAX; /* far past any valid value; still refused below */
  size_t at[MAX_FIELDS], flen[MAX_FIELDS];
  uint32_t fields = 0;
  size_t begin = 0;
  for (size_t i = 0; i <= len;) {
    size_t sep = i < len ? separator_at(value, len, i) : 1;
    if (!sep) {
      i++;
      continue;
    }
    if (fields < MAX_FIELDS) {
      at[fields] = begin;
      flen[fields] = i - begin;
    }
    fields++;
    i += sep;
    begin = i;
  }
  out->fields = fields;
  if (fields == 1) return fail(out, SW_SPEC_ERR_NO_COMMA, 0, len);
  if (fields > MAX_FIELDS) return fail(out, SW_SPEC_ERR_TOO_MANY_FIELDS, 0, len);

  out->end_at = (uint32_t)at[1];
  out->end_len = (uint32_t)flen[1];
  if (flen[1] == 0) return fail(out, SW_SPEC_ERR_END_MISSING, at[1], 0);
  uint32_t bad = check_name(value + at[1], flen[1], SW_SPEC_ERR_END_WHITESPACE);
  if (bad) return fail(out, bad, at[1], flen[1]);
  if (fields == 3) {
    if (flen[2] != 12 || memcmp(value + at[2], "full-content", 12) != 0)
      return fail(out, SW_SPEC_ERR_THIRD_FIELD, at[2], flen[2]);
    out->full_content = 1;
  }

  size_t start_len = flen[0];
  if (start_len == 0) return SW_SPEC_OK;
  const char *colon = NULL;
  for (size_t i = start_len; i-- > 0;)
    if (value[at[0] + i] == ':') {
      colon = value + at[0] + i;
      break;
    }
  if (colon) {
    size_t colon_at = (size_t)(colon - value);
    if (parse_outid(value, colon_at + 1, at[0] + start_len - colon_at - 1, out)) return out->error;
    start_len = colon_at - at[0];
  }
  out->start_at = (uint32_t)at[0];
  out->start_len = (uint32_t)start_len;
  if (start_len == 0) return fail(out, SW_SPEC_ERR_START_MISSING, at[0], 0);
  bad = check_name(value + at[0], start_len, SW_SPEC_ERR_START_WHITESPACE);
  if (bad) return fail(out, bad, at[0], start_len);
  return SW_SPEC_OK;
}

/* The reasons name the limit the grammar enforces; the compiler holds the
 * two together. */
#define SW_OP_NAME_BYTES 95
_Static_assert(SW_OP_NAME_BYTES == SW_OP_NAME_MAX - 1, "op-name limit of the reasons is the ring's");
#define SW_STR_(x) #x
#define SW_STR(x) SW_STR_(x)

const char *sw_watch_spec_reason(uint32_t error) {
  switch (error) {
  case SW_SPEC_OK: return "valid";
  case SW_SPEC_ERR_NO_COMMA: return "a comma before end is required";
  case SW_SPEC_ERR_TOO_MANY_FIELDS: return "at most 3 fields";
  case SW_SPEC_ERR_END_MISSING: return "end op is required";
  case SW_SPEC_ERR_END_WHITESPACE: return "end op starts or ends with whitespace";
  case SW_SPEC_ERR_END_CONTROL: return "end op contains a control character";
  case SW_SPEC_ERR_END_TOO_LONG: return "end op is longer than " SW_STR(SW_OP_NAME_BYTES) " bytes";
  case SW_SPEC_ERR_THIRD_FIELD: return "third field must be exactly full-content";
  case SW_SPEC_ERR_OUTID_MISSING: return "outid is missing after the colon";
  case SW_SPEC_ERR_OUTID_NOT_NUMBER: return "outid must be a non-negative integer";
  case SW_SPEC_ERR_OUTID_LEADING_ZERO: return "outid must not have leading zeros";
  case SW_SPEC_ERR_OUTID_TOO_LARGE: return "outid is larger than 2147483647";
  case SW_SPEC_ERR_START_MISSING: return "start op is missing before :outid";
  case SW_SPEC_ERR_START_WHITESPACE: return "start op starts or ends with whitespace";
  case SW_SPEC_ERR_START_CONTROL: return "start op contains a control character";
  case SW_SPEC_ERR_START_TOO_LONG: return "start op is longer than " SW_STR(SW_OP_NAME_BYTES) " bytes";
  default: return "not a valid value";
  }
}
