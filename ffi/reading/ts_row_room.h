/*
 * ts_row_room.h: which rows the TypeScript reader (analysis/memscope_csv/
 * read.ts) refuses as running on too long, for the native readers that
 * must refuse the same rows, and take every other.
 *
 * It reads a log from its start in reads of SW_TS_CHUNK bytes and, after
 * each, refuses a row left unfinished that is longer than SW_TS_ROOM: so a
 * row between 16 and 18 MiB is refused or not by where the reads end in it.
 */
#ifndef STOMPWATCH_TS_ROW_ROOM_H
#define STOMPWATCH_TS_ROW_ROOM_H

#include <stdbool.h>
#include <stdint.h>

#define SW_TS_CHUNK (2u << 20) /* read.ts: the default bufferSize */
#define SW_TS_ROOM (16u << 20) /* _scan.ts: MAX_ROW_BYTES */
/* _scan.ts LONGEST_ROW: no row longer is taken, wherever the reads end. */
#define SW_TS_LONGEST_ROW (SW_TS_ROOM + SW_TS_CHUNK)

/* Whether the TypeScript reader refuses the row starting at file offset
 * `s` that is unfinished at offset `upto`, its newline not read yet (`eof`:
 * the file ends there, the row with it). */
static inline bool sw_ts_refuses_row(uint64_t s, uint64_t upto, bool eof) {
  const uint64_t b = eof ? upto : upto / SW_TS_CHUNK * SW_TS_CHUNK;
  return b > s && b - s > SW_TS_ROOM;
}

#endif
