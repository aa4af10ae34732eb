/*
 * leak_replay.h: check_leaks' replay of the devices' windows over rows kept
 * in memory (leak_replay.c), for ffi/bindings.ts leakReplayWindows and for
 * a streaming pass that reads on from rows kept (leak_scan.c).
 */
#ifndef SW_LEAK_REPLAY_H
#define SW_LEAK_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The windows of devices 0 .. devices - 1 over the first `rows` rows:
 * device k's A, B, C at windows[stride * k] (A NaN: no window), replayed
 * each on its own (leak_replay.c replay_window), its blocks pending into out +
 * start[k] (start: devices + 1 entries), how many (0 without a window, or
 * replay_window's error) in left[k]. Where several devices have a
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
