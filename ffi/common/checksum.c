/*
 * checksum.c: the checksums a watch can record. XXH3-64 (system xxHash) is
 * the fast default; the msMemScope CRC-64 exists so files can be compared
 * with the real tool's. No library ships that CRC: it is a table-driven,
 * LSB-first CRC-64 whose table is built from 0x42F0E1EBA9EA3693 used as is
 * (not reflected), init and final xor all ones. Check value for "123456789":
 * b86883e6fa710a9f.
 *
 * XXH3 runs the library's own code built for AVX2 where the CPU has it
 * (xxh3_wide.c): the same checksums, about four times faster on a chunk
 * in cache.
 */
#include <pthread.h>
#include <stdlib.h>
#include <xxhash.h>

#include "stompwatch_ring.h"
#include "sw_common.h"

#define CRC64_POLY 0x42F0E1EBA9EA3693ull

static uint64_t g_table[8][256];
static pthread_once_t g_table_once = PTHREAD_ONCE_INIT;

/* Slicing-by-8 over the same byte-at-a-time table gives the same CRC. */
static void build_table(void) {
  for (int i = 0; i < 256; i++) {
    uint64_t crc = (uint64_t)i;
    for (int k = 0; k < 8; k++) crc = (crc & 1) ? (crc >> 1) ^ CRC64_POLY : crc >> 1;
    g_table[0][i] = crc;
  }
  for (int i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++) g_table[t][i] = (g_table[t - 1][i] >> 8) ^ g_table[0][g_table[t - 1][i] & 0xff];
}

/* Continues a CRC over `data`; start with ~0 and xor the result with ~0. */
uint64_t sw_crc64_msmemscope(uint64_t crc, const void *data, size_t len) {
  pthread_once(&g_table_once, build_table);
  const uint8_t *p = data;
  while (len >= 8) {
    uint64_t v;
    __builtin_memcpy(&v, p, 8);
    v ^= crc;
    crc = g_table[7][v & 0xff] ^ g_table[6][(v >> 8) & 0xff] ^ g_table[5][(v >> 16) & 0xff] ^
          g_table[4][(v >> 24) & 0xff] ^ g_table[3][(v >> 32) & 0xff] ^ g_table[2][(v >> 40) & 0xff] ^
          g_table[1][(v >> 48) & 0xff] ^ g_table[0][v >> 56];
    p += 8;
    len -= 8;
  }
  while (len--) crc = g_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

/* Whether this CPU takes the AVX2 build: asked once, read on every call. */
static int g_wide;
static pthread_once_t g_wide_once = PTHREAD_ONCE_INIT;
static void ask_wide(void) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  g_wide = __builtin_cpu_supports("avx2");
#endif
}
static int wide(void) {
  pthread_once(&g_wide_once, ask_wide);
  return g_wide;
}

/* A hasher's state is made by the build that uses it (g_wide never changes). */
void sw_hasher_reset(struct sw_hasher *h, uint32_t algo) {
  h->algo = algo;
  h->crc = ~0ull;
  if (algo != SW_CHECKSUM_XXH3) return;
  if (!h->xxh_state) h->xxh_state = wide() ? sw_xxh3_wide_new() : (void *)XXH3_createState();
  if (!h->xxh_state) return;
  if (wide()) sw_xxh3_wide_reset(h->xxh_state);
  else XXH3_64bits_reset(h->xxh_state);
}

void sw_hasher_update(struct sw_hasher *h, const void *data, size_t len) {
  if (h->algo == SW_CHECKSUM_CRC64_MSMEMSCOPE) h->crc = sw_crc64_msmemscope(h->crc, data, len);
  else if (!h->xxh_state) return;
  else if (g_wide) sw_xxh3_wide_update(h->xxh_state, data, len); /* reset asked already */
  else XXH3_64bits_update(h->xxh_state, data, len);
}

void sw_hasher_free(struct sw_hasher *h) {
  if (h->xxh_state && wide()) sw_xxh3_wide_free(h->xxh_state);
  else XXH3_freeState(h->xxh_state);
  h->xxh_state = NULL;
}

uint64_t sw_hasher_digest(struct sw_hasher *h) {
  if (h->algo == SW_CHECKSUM_CRC64_MSMEMSCOPE) return h->crc ^ ~0ull;
  if (!h->xxh_state) return 0;
  return wide() ? sw_xxh3_wide_digest(h->xxh_state) : XXH3_64bits_digest(h->xxh_state);
}

uint64_t sw_checksum(uint32_t algo, const void *data, size_t len) {
  if (algo == SW_CHECKSUM_CRC64_MSMEMSCOPE) return sw_crc64_msmemscope(~0ull, data, len) ^ ~0ull;
  return wide() ? sw_xxh3_wide(data, len) : XXH3_64bits(data, len);
}
