/*
 * shared_calls.c: the daemon's doors into the code it shares with the hook
 * (common/): the checksum and the clocks a job's events carry, for tests
 * that hold them to their references, and the --watch grammar the command
 * line checks a value with before a job starts.
 */
#include "stompwatch_ring.h"
#include "sw_common.h"

/* The checksum the hook records for these host bytes (algo: SW_CHECKSUM_*). */
SW_EXPORT uint64_t stompwatch_checksum(uint32_t algo, const void *data, size_t len) {
  return sw_checksum(algo, data, len);
}

SW_EXPORT uint64_t stompwatch_now_ns(void) { return sw_now_ns(); }

/* The event clock as the hook stamps events. */
SW_EXPORT uint64_t stompwatch_event_ns(void) { return sw_event_ns(); }

/* Parses a --watch value of `len` bytes into `out` (struct sw_watch_spec,
 * read as uint32_t[]); returns the error, 0 when valid. */
SW_EXPORT uint32_t stompwatch_watch_spec_parse(const char *value, uint64_t len, struct sw_watch_spec *out) {
  return sw_watch_spec_parse(value, (size_t)len, out);
}
