/*
 * sw_common.h: the code both native libraries are built from. The job-side
 * library (libstompwatch_hook.so, preloaded into jobs) and the daemon-side
 * one (libstompwatch_daemon.so, opened by ffi/bindings.ts) each compile
 * the files of common/ with their own flags, so one source holds each rule: the
 * clock events are stamped with, the checksums, the --watch grammar.
 */
#ifndef STOMPWATCH_COMMON_H
#define STOMPWATCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

#define SW_EXPORT __attribute__((visibility("default")))
#define SW_LIKELY(x) __builtin_expect(!!(x), 1)
#define SW_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- clocks (event_clock.c) ---- */

/* CLOCK_REALTIME in ns (heartbeats, start time). */
uint64_t sw_now_ns(void);
/* The same clock for event stamps, cheaper. */
uint64_t sw_event_ns(void);

/* ---- checksums (checksum.c) ---- */

struct sw_hasher {
  uint32_t algo;
  uint64_t crc;
  void *xxh_state;
};
void sw_hasher_reset(struct sw_hasher *h, uint32_t algo);
void sw_hasher_update(struct sw_hasher *h, const void *data, size_t len);
uint64_t sw_hasher_digest(struct sw_hasher *h);
void sw_hasher_free(struct sw_hasher *h);
uint64_t sw_crc64_msmemscope(uint64_t crc, const void *data, size_t len);
/* The checksum of host bytes in one call (algo: SW_CHECKSUM_*). */
uint64_t sw_checksum(uint32_t algo, const void *data, size_t len);
/* XXH3-64 built for AVX2 (xxh3_wide.c): call only on a CPU that has it. */
void *sw_xxh3_wide_new(void);
void sw_xxh3_wide_free(void *state);
void sw_xxh3_wide_reset(void *state);
void sw_xxh3_wide_update(void *state, const void *data, size_t len);
uint64_t sw_xxh3_wide_digest(void *state);
uint64_t sw_xxh3_wide(const void *data, size_t len);

/* ---- the --watch grammar (watch_spec.c) ---- */

/* What sw_watch_spec_parse found, as offsets into the value it was given.
 * All fields are uint32_t, in this order: ffi/bindings.ts reads them as a
 * Uint32Array (SPEC.* there; a test holds the two together). */
struct sw_watch_spec {
  uint32_t error;        /* SW_SPEC_OK or SW_SPEC_ERR_* */
  uint32_t fields;       /* fields the value has (separated by , or ，) */
  uint32_t outid;        /* output of start to watch; 0 when not written */
  uint32_t full_content; /* third field is full-content */
  uint32_t start_at, start_len; /* start op; length 0 for `,end` */
  uint32_t end_at, end_len;     /* end op */
  uint32_t detail_at, detail_len; /* the text an error is about */
};

/* Errors, in the order the fields are checked. */
enum sw_spec_error {
  SW_SPEC_OK = 0,
  SW_SPEC_ERR_NO_COMMA = 1,          /* one field: ,END is the shortest form */
  SW_SPEC_ERR_TOO_MANY_FIELDS = 2,   /* more than 3 fields */
  SW_SPEC_ERR_END_MISSING = 3,
  SW_SPEC_ERR_END_WHITESPACE = 4,    /* detail: the end op */
  SW_SPEC_ERR_END_CONTROL = 5,
  SW_SPEC_ERR_END_TOO_LONG = 6,
  SW_SPEC_ERR_THIRD_FIELD = 7,       /* detail: the third field */
  SW_SPEC_ERR_OUTID_MISSING = 8,
  SW_SPEC_ERR_OUTID_NOT_NUMBER = 9,  /* detail: the text after the last colon */
  SW_SPEC_ERR_OUTID_LEADING_ZERO = 10,
  SW_SPEC_ERR_OUTID_TOO_LARGE = 11,
  SW_SPEC_ERR_START_MISSING = 12,    /* `:outid` with no op before it */
  SW_SPEC_ERR_START_WHITESPACE = 13, /* detail: the start op */
  SW_SPEC_ERR_START_CONTROL = 14,
  SW_SPEC_ERR_START_TOO_LONG = 15,
};

/* Largest outid: the hook compares it with a C int. */
#define SW_SPEC_MAX_OUTID 2147483647u

/* Parses `[start[:outid]],end[,full-content]` (`len` bytes of UTF-8, NULs
 * included); returns out->error. */
uint32_t sw_watch_spec_parse(const char *value, size_t len, struct sw_watch_spec *out);
/* A short reason for an error, for a line on stderr. */
const char *sw_watch_spec_reason(uint32_t error);

#endif
