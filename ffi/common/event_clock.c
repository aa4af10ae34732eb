/*
 * event_clock.c: timestamps for events, in CLOCK_REALTIME nanoseconds, at a
 * third of clock_gettime's cost where the CPU allows.
 *
 * Every op launch is stamped, and on the VMs we run on clock_gettime costs
 * about 36 ns of the hook's 100 ns budget against 11 ns for rdtsc. When the
 * kernel itself keeps time with the TSC (so it is invariant and synchronised
 * across cores), the time is extrapolated from an anchor (tsc, ns) with a
 * rate measured against clock_gettime: first over a few milliseconds, then
 * re-measured and re-anchored about once a second, so the stamps never
 * stray more than a microsecond or so from the real clock. Anywhere else
 * (Arm, a VM without a stable TSC) it is clock_gettime.
 *
 * The first stamp of a process spends 2 ms measuring the first rate. The
 * anchor is a seqlock: one thread re-anchors (an odd sequence), the others
 * read it lock-free or, while it is being written, take the slow path.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sw_common.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

uint64_t sw_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if HAVE_TSC
enum { TSC_UNKNOWN = 0, TSC_CALIBRATING = 1, TSC_USABLE = 2, TSC_UNUSABLE = 3 };
#define FIRST_WINDOW_NS 2000000ull      /* first rate: measured over 2 ms at start */
#define REANCHOR_EVERY_NS 1000000000ull /* then re-measured each second */

static int g_tsc_state = TSC_UNKNOWN;
static uint64_t g_seq; /* odd while the anchor is being written */
static uint64_t g_tsc0, g_ns0;
static uint64_t g_window_ticks; /* how long an anchor serves */
static uint64_t g_mult;         /* nanoseconds per tick, << 32 */

static int kernel_uses_tsc(void) {
  char name[32] = {0};
  FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
  if (!f) return 0;
  int ok = fgets(name, sizeof name, f) && strncmp(name, "tsc", 3) == 0 && (name[3] == '\n' || name[3] == 0);
  fclose(f);
  return ok;
}

/* A (tsc, ns) pair read as close together as the clock allows: the tick
 * count bracketed by two real readings, the tightest of a few tries (a
 * first call that faults the vDSO in, or a preemption, would skew a rate
 * measured over milliseconds). */
static void read_pair(uint64_t *tsc, uint64_t *ns) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 4; i++) {
    uint64_t a = sw_now_ns(), t = __rdtsc(), b = sw_now_ns();
    if (b >= a && b - a < best) {
      best = b - a;
      *tsc = t;
      *ns = a + (b - a) / 2;
    }
  }
}

/* Sets the anchor to (tsc, ns) with the rate measured since the last one.
 * Called with the sequence odd, by one thread. */
static void set_anchor(uint64_t tsc, uint64_t ns) {
  uint64_t tsc0 = __atomic_load_n(&g_tsc0, __ATOMIC_RELAXED), ns0 = __atomic_load_n(&g_ns0, __ATOMIC_RELAXED);
  if (tsc > tsc0 && ns > ns0) {
    double ns_per_tick = (double)(ns - ns0) / (double)(tsc - tsc0);
    __atomic_store_n(&g_mult, (uint64_t)(ns_per_tick * 4294967296.0), __ATOMIC_RELAXED);
    __atomic_store_n(&g_window_ticks, (uint64_t)((double)REANCHOR_EVERY_NS / ns_per_tick), __ATOMIC_RELAXED);
  }
  __atomic_store_n(&g_tsc0, tsc, __ATOMIC_RELAXED);
  __atomic_store_n(&g_ns0, ns, __ATOMIC_RELAXED);
}

/* Once per process: anchor, then a first rate over FIRST_WINDOW_NS. */
static void calibrate(void) {
  if (!kernel_uses_tsc()) {
    __atomic_store_n(&g_tsc_state, TSC_UNUSABLE, __ATOMIC_RELEASE);
    return;
  }
  uint64_t tsc = 0, ns = 0;
  read_pair(&tsc, &ns);
  __atomic_store_n(&g_tsc0, tsc, __ATOMIC_RELAXED);
  __atomic_store_n(&g_ns0, ns, __ATOMIC_RELAXED);
  while (sw_now_ns() - ns < FIRST_WINDOW_NS) {
  }
  read_pair(&tsc, &ns);
  set_anchor(tsc, ns);
  __atomic_store_n(&g_tsc_state, TSC_USABLE, __ATOMIC_RELEASE);
}

/* The anchor has served its second: take the real time and, if no other
 * thread is at it, move the anchor there. */
static uint64_t reanchor(void) {
  uint64_t tsc = 0, ns = 0;
  read_pair(&tsc, &ns);
  uint64_t seq = __atomic_load_n(&g_seq, __ATOMIC_RELAXED);
  if ((seq & 1) || !__atomic_compare_exchange_n(&g_seq, &seq, seq + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return ns;
  __atomic_thread_fence(__ATOMIC_RELEASE); /* readers see the odd sequence before new values */
  set_anchor(tsc, ns);
  __atomic_store_n(&g_seq, seq + 2, __ATOMIC_RELEASE);
  return ns;
}
#endif

#if HAVE_TSC
/* Everything but the common case: the first stamp, a VM without a usable
 * TSC, and the anchor's second running out. */
__attribute__((noinline)) static uint64_t event_ns_slow(int state) {
  if (state != TSC_USABLE) {
    int unknown = TSC_UNKNOWN;
    if (state == TSC_UNKNOWN && __atomic_compare_exchange_n(&g_tsc_state, &unknown, TSC_CALIBRATING, 0,
                                                            __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
      calibrate();
    return sw_now_ns();
  }
  return reanchor();
}
#endif

/* Kept small, so that the op launch path gets it inlined. */
uint64_t sw_event_ns(void) {
#if HAVE_TSC
  int state = __atomic_load_n(&g_tsc_state, __ATOMIC_ACQUIRE);
  if (SW_UNLIKELY(state != TSC_USABLE)) return event_ns_slow(state);
  uint64_t seq = __atomic_load_n(&g_seq, __ATOMIC_ACQUIRE);
  uint64_t tsc0 = __atomic_load_n(&g_tsc0, __ATOMIC_RELAXED);
  uint64_t ns0 = __atomic_load_n(&g_ns0, __ATOMIC_RELAXED);
  uint64_t window = __atomic_load_n(&g_window_ticks, __ATOMIC_RELAXED);
  uint64_t mult = __atomic_load_n(&g_mult, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  uint64_t tsc = __rdtsc();
  if (SW_LIKELY(!(seq & 1) && __atomic_load_n(&g_seq, __ATOMIC_RELAXED) == seq && tsc >= tsc0 &&
                tsc - tsc0 < window))
    return ns0 + (uint64_t)(((unsigned __int128)(tsc - tsc0) * mult) >> 32);
  return event_ns_slow(state);
#else
  return sw_now_ns();
#endif
}
