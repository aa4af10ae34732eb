/*
 * xxh3_wide.c: xxHash's own XXH3-64, compiled here for AVX2 and used on
 * x86-64 CPUs that have it (checksum.c asks once, in code built for the
 * baseline: every function here may use AVX2). The
 * system libxxhash is built for the x86-64 baseline, SSE2, and hashes a
 * staged chunk that sits in cache at about 11 GiB/s on the 2-vCPU EPYC VM
 * of 2026-11-25; this build of the same code does about 42 GiB/s there, so
 * hashing a sample's chunk costs a quarter of copying it and the sample
 * stays near the cost of the copy even when the copy engine and the hasher
 * share one core. XXH3's result does not depend on the vector width: the
 * checksums are the library's, bit for bit (test/ffi/checksum_test.ts).
 * Elsewhere (Arm hosts build NEON in by default) the library is used.
 */
#include <stddef.h>
#include <stdint.h>

#include "sw_common.h"

#if defined(__x86_64__)
#if !defined(__AVX2__)
#pragma GCC target("avx2")
#endif
/* The implementation from xxHash's header, namespaced XXH_INLINE_ so it
 * never meets the library's symbols. */
#define XXH_INLINE_ALL
#include <xxhash.h>

void *sw_xxh3_wide_new(void) { return XXH3_createState(); }
void sw_xxh3_wide_free(void *state) { XXH3_freeState(state); }
void sw_xxh3_wide_reset(void *state) { XXH3_64bits_reset(state); }
void sw_xxh3_wide_update(void *state, const void *data, size_t len) { XXH3_64bits_update(state, data, len); }
uint64_t sw_xxh3_wide_digest(void *state) { return XXH3_64bits_digest(state); }
uint64_t sw_xxh3_wide(const void *data, size_t len) { return XXH3_64bits(data, len); }
#else
void *sw_xxh3_wide_new(void) { return NULL; }
void sw_xxh3_wide_free(void *state) { (void)state; }
void sw_xxh3_wide_reset(void *state) { (void)state; }
void sw_xxh3_wide_update(void *state, const void *data, size_t len) { (void)state, (void)data, (void)len; }
uint64_t sw_xxh3_wide_digest(void *state) { return (void)state, 0; }
uint64_t sw_xxh3_wide(const void *data, size_t len) { return (void)data, (void)len, 0; }
#endif
