/*
 * leak_replay.h: check_leaks' replay of one device's window over rows kept
 * in memory (leak_replay.c), for ffi/bindings.ts leakReplay and for a
 * streaming pass that reads on from rows kept (leak_scan.c).
 */
#ifndef SW_LEAK_REPLAY_H
#define SW_LEAK_REPLAY_H

#include <stdint.h>

/* Shared with ffi/bindings.ts leakReplay, field for field. */
struct sw_leak_replay_args {
  const uint8_t *kind;
  const uint32_t *device;
  const double *id, *ptr, *size;
  uint64_t rows;
  double a, b, c;
  uint32_t dev;
  uint32_t pad;
  uint32_t *out; /* room for `rows` indices */
  /* NULL: rows 0 .. rows - 1; else the `rows` rows to read, in file order
   * (a caller with many devices lists each one's rows once: reading every
   * row for each device took a 200-device window most of a second). */
  const uint32_t *only;
};

/* The indices of device `dev`'s blocks still pending at the end of its
 * window A, B, C, by ID, into `out`; how many, -1 when memory is short,
 * -(2 + i) when row i is a MALLOC inside the window without a size. */
int64_t stompwatch_leak_replay(struct sw_leak_replay_args *a, const uint8_t *kind, const uint32_t *device,
                               const double *id, const double *ptr, const double *size, const uint32_t *only,
                               uint32_t *out);

/* The windows of several devices at once (leak_replay.c says how). */
int32_t stompwatch_leak_replay_windows(const uint8_t *kind, const uint32_t *device, const double *id,
                                       const double *ptr, const double *size, double rows, const double *windows,
                                       double count, uint32_t *out, double *found);

#endif
