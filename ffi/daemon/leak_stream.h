/*
 * leak_stream.h: check_leaks' replay of the windows as the rows are read,
 * for a window too large to keep (leak_stream.c says how).
 */
#ifndef SW_LEAK_STREAM_H
#define SW_LEAK_STREAM_H

#include <stdbool.h>
#include <stdint.h>

struct sw_leak_stream;

/* Devices a pass tells apart (leak_scan.c); a row's `dev` is below it. */
#define SW_LEAK_MAX_DEVICES 256

/* A replay with room for `room` pending blocks, and as many slots in each
 * of its tables; NULL when memory is short. */
struct sw_leak_stream *sw_leak_stream_new(uint64_t room);
void sw_leak_stream_free(struct sw_leak_stream *s);

/* Before the replay runs: device `dev`'s MALLOCs come at most `disorder`
 * IDs behind the largest MALLOC ID before them in the file (the first
 * pass measured it: leak_scan.c struct span), so FREEs and IDs further
 * back than that are forgotten (else 65,536 back: a log of 64 devices,
 * each numbering its own IDs, remembered most of its FREEs), and one that
 * far back and further is still in order (a log with MALLOCs 200,000 IDs
 * late was left to the TypeScript passes: 13 s, 355 MB). A MALLOC that
 * comes further back all the same (the file changed) ends the replay. */
void sw_leak_stream_horizon(struct sw_leak_stream *s, uint32_t dev, double disorder);

/* Before the replay runs: device `dev`'s window ends at mark C, `c`: a
 * FREE past it clears no block (the Ptrs freed, sw_leak_stream_ptrs_freed,
 * say which come only past it). Else none is taken to end. */
void sw_leak_stream_window_end(struct sw_leak_stream *s, uint32_t dev, double c);

/* Before the replay runs: no MALLOC of device `dev` has the ID of another
 * (the first pass saw each come once, ids_seen.h), so none takes a block's
 * ID: no ID is kept, and a block at a Ptr never freed is a leak at once. */
void sw_leak_stream_ids_once(struct sw_leak_stream *s, uint32_t dev);

/* Before the replay runs: replay only the blocks of part `part` of
 * `parts` (by device and Ptr; a Ptr's rows never touch another Ptr's
 * blocks), for windows with more blocks pending at once than the room. A
 * MALLOC of another part still takes its ID from a block of this one.
 * At its room, the replay splits its part in two (sw_leak_stream_split)
 * while there are at most `max_parts` parts. */
void sw_leak_stream_part(struct sw_leak_stream *s, uint32_t part, uint32_t parts, uint32_t max_parts);
/* Part `part` of `parts` made part `part` of twice as many parts, the
 * blocks of the other half (part + parts) dropped: what a replay of this
 * part alone would hold, read by another replay. False, changing nothing,
 * past `max_parts`. */
bool sw_leak_stream_split(struct sw_leak_stream *s);
/* How many parts there are by now; the replay's is part `part` of them. */
uint32_t sw_leak_stream_parts(const struct sw_leak_stream *s);
/* Whether device `dev`'s blocks at `ptr` are of the replay's part. */
bool sw_leak_stream_mine(const struct sw_leak_stream *s, uint32_t dev, double ptr);
/* Whether the replay stopped at its room (or memory was short for it)
 * where more parts would each hold fewer blocks (past `max_parts`): not
 * where one Ptr alone holds half the room. */
bool sw_leak_stream_full(const struct sw_leak_stream *s);

/* An in-window memory row of device `dev`; a MALLOC's `offset`, `line`,
 * `size` and `odd_id` are what leak_scan.c keeps of a leaked row. */
struct sw_leak_stream_row {
  double id, ptr, size, offset;
  uint32_t line;
  uint16_t dev;
  bool malloc_row, odd_id;
};

/* Before the replay runs (after sw_leak_stream_part): `freed`, the Ptrs
 * a first pass saw freed anywhere in the file (leak_freed.h, complete).
 * A MALLOC at a Ptr it does not have (an unfreed Ptr) is a leak unless a
 * later MALLOC takes its ID: it is queued only until no such MALLOC can
 * come (its horizon), then counted, and kept while among the first
 * `max_listed` by device and ID of its bucket (a 64th of the Ptrs, by
 * hash: parts split along them); of those, only the first `max_listed` of
 * the part are rows at the end. Without it, each such block was held to
 * the end. The blocks held and the leaks listed share the room. */
void sw_leak_stream_ptrs_freed(struct sw_leak_stream *s, const uint64_t *freed, uint64_t max_listed);
/* Whether a block of MALLOC row `row` would be at an unfreed Ptr, and so
 * counted, not held. */
bool sw_leak_stream_at_unfreed_ptr(const struct sw_leak_stream *s, const struct sw_leak_stream_row *row);

/* Before the replay runs, for a pass that reads on from rows a first pass
 * kept (leak_scan.c stream_pass): the MALLOCs still to come, by Ptr, past
 * those rows (leak_freed.h), which it counts down as it reads them: a FREE
 * at a Ptr with none to come is not remembered. */
void sw_leak_stream_mallocs_to_come(struct sw_leak_stream *s, uint8_t *mallocs);
/* Where the MALLOCs to come at `ptr` are counted, to fetch ahead; NULL
 * where they are not. */
const uint8_t *sw_leak_stream_mallocs_at(const struct sw_leak_stream *s, double ptr);

/* Before the replay runs, for a pass that reads on from rows replayed in
 * memory (leak_scan.c stream_pass), what the rows still to come need of
 * those: device `dev`'s largest MALLOC ID among them; each block they left
 * pending; each of their FREEs (a MALLOC still to come, with a smaller ID,
 * comes before it in ID order). Those of another part are passed over.
 * False where sw_leak_stream_run would stop (past the room, memory short). */
void sw_leak_stream_seen(struct sw_leak_stream *s, uint32_t dev, double max_malloc_id);
/* Whether a FREE of device `dev` at `ptr` with `id` may still matter to a
 * MALLOC to come (not its horizon of IDs or more behind the largest MALLOC
 * ID seen, and one may come at its Ptr). */
bool sw_leak_stream_remembers(const struct sw_leak_stream *s, uint32_t dev, double ptr, double id);
bool sw_leak_stream_pending(struct sw_leak_stream *s, const struct sw_leak_stream_row *row);
/* sw_leak_stream_pending for each of `n` blocks, in turn. */
bool sw_leak_stream_pending_all(struct sw_leak_stream *s, const struct sw_leak_stream_row *rows, uint64_t n);
bool sw_leak_stream_freed(struct sw_leak_stream *s, uint32_t dev, double ptr, double id);

/* The rows go from the thread that reads them to the one that replays
 * them through a queue, so that reading and replaying overlap. From the
 * reading thread: a row, in file order (false once the replay has stopped:
 * read no more), and the end of the rows (`complete`: every row was given). */
bool sw_leak_stream_push(struct sw_leak_stream *s, const struct sw_leak_stream_row *row);
void sw_leak_stream_close(struct sw_leak_stream *s, bool complete);

/* From the replaying thread: replays the rows until the reading thread
 * closes the queue. False when the replay cannot go on with certainty of
 * msMemScope's answer (the rows are further out of ID order than it
 * remembers, more blocks are pending than its budget, memory is short) or
 * the rows were not complete. */
bool sw_leak_stream_run(struct sw_leak_stream *s);

/* The blocks still pending once every row is read, the leaks: written to
 * the arrays (room for `cap`) by device and ID, as leak_scan.c keeps MALLOC
 * rows. Returns how many, or UINT64_MAX when they do not fit; `odd_ids`
 * counts those whose ID was not written as its plain digits. The leaks at
 * Ptrs never freed that are not among the first `max_listed` are counted
 * in `unlisted` instead (for each of the SW_LEAK_MAX_DEVICES devices, how
 * many, and their bytes' low and high 64 bits). The replay is over after
 * it. */
uint64_t sw_leak_stream_leaks(struct sw_leak_stream *s, uint64_t cap, uint8_t *kind, uint32_t *device, double *id,
                              double *ptr, double *size, double *row_offset, uint32_t *line, uint64_t *odd_ids,
                              uint64_t *unlisted);

#endif
