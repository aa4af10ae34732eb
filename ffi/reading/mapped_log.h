/*
 * mapped_log.h: an event log read through a read-only mapping rather than
 * read(2) into a buffer: the kernel's copy of every byte was a sixth of a
 * native pass over a log (check-leaks, compare, snapshot), and mapping the
 * page cache costs a fault per 64 KiB instead.
 *
 * A mapping answers a file cut shorter while it is read (a log's writer
 * cutting a half-written row, or a person truncating it) with SIGBUS, which
 * would end the process: reading is done inside sw_mapped_run, whose
 * handler puts zeros where the file was cut and has the run say so. Built
 * into the daemon and analysis
 * libraries, never into the hook: a training job's signals are its own.
 */
#ifndef STOMPWATCH_MAPPED_LOG_H
#define STOMPWATCH_MAPPED_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes [from, size) of a file as it was when mapped (it may grow after;
 * those bytes are not read), then at least 64 readable bytes. */
struct sw_mapped_log {
    const uint8_t *bytes; /* file offset `from` */
    uint64_t from, size;
    int fd;
    void *map;
    size_t len;
    size_t released; /* bytes of the mapping let go of */
};

/* Maps fd's bytes from `from` to its present end; false when the file
 * cannot be mapped (the caller reads it instead). An empty range maps
 * nothing and is true. */
bool sw_mapped_log_open(int fd, uint64_t from, struct sw_mapped_log *m);
void sw_mapped_log_close(struct sw_mapped_log *m);
/* Takes the log to end at file offset `end` where it is longer now (0:
 * where it ends): a read after an earlier one reads the bytes that one
 * read, a row it found half written as it found it, however the file grew
 * since. */
static inline void sw_mapped_log_end_at(struct sw_mapped_log *m, uint64_t end) {
    if (end && m->size > end) m->size = end > m->from ? end : m->from;
}
/* Lets go of the pages before file offset `upto`, read and not to be read
 * again: mapped pages count in the process's memory (its RSS) until then,
 * which on a 1 GB log would be the whole log. */
void sw_mapped_log_release(struct sw_mapped_log *m, uint64_t upto);

/* How a run over a mapped log ended: it read the bytes mapped; the file
 * got shorter meanwhile (where fn read past the new end it read zeros: its
 * work is to be dropped); a page could not be read (an I/O error, read as
 * zeros too). */
enum sw_mapped_end { SW_MAPPED_WHOLE, SW_MAPPED_CUT, SW_MAPPED_FAILED };

/* Runs fn(arg) reading `m`. */
enum sw_mapped_end sw_mapped_run(const struct sw_mapped_log *m, void (*fn)(void *), void *arg);

#endif
