/*
 * leak_replay.h: check_leaks' replay of one device's window over rows kept
 * in memory (leak_replay.c), and of several devices' at once, for
 * ffi/bindings.ts leakReplayWindows and for a streaming pass that reads on
 * from rows kept (leak_scan.c).
 */
#ifndef SW_LEAK_REPLAY_H
#define SW_LEAK_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

/* One device's window over the rows. */
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

/*
 * The windows of devices 0 .. devices - 1 over the first `rows` rows:
 * device k's A, B, C at windows[stride * k] (A NaN: no window), replayed
 * as stompwatch_leak_replay replays it, its blocks pending into out +
 * start[k] (start: devices + 1 entries), how many (0 without a window, or
 * stompwatch_leak_replay's error) in left[k]. Where several devices have a
 * window, each device's rows are listed once and two threads take the
 * devices in turn; one window reads every row. False when memory is short.
 */
bool sw_leak_replay_devices(const uint8_t *kind, const uint32_t *device, const double *id, const double *ptr,
                            const double *size, uint64_t rows, const double *windows, uint32_t stride,
                            uint32_t devices, uint32_t *out, uint64_t *start, int64_t *left);

/* sw_leak_replay_devices for ffi/bindings.ts (leak_replay.c says how). */
int32_t stompwatch_leak_replay_windows(const uint8_t *kind, const uint32_t *device, const double *id,
                                       const double *ptr, const double *size, double rows, const double *windows,
                                       double devices, uint32_t *out, double *found);

#endif
