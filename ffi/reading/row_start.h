/*
 * row_start.h: where a second thread may start reading an event log. A log
 * written with call stacks (msMemScope's call_stack option) holds more
 * newlines inside its quoted stacks than between rows, so the first newline
 * past the middle is most often inside a quoted field: the second thread's
 * rows were then dropped (each pass checks that the first thread's rows end
 * where the second's begin) and one thread read the whole log.
 */
#ifndef STOMPWATCH_ROW_START_H
#define STOMPWATCH_ROW_START_H

#include <stdint.h>

/*
 * The start of a row after offset `mid` of fd's file, for a second reader:
 * after the first newline past `mid` that is followed by what begins an
 * event-log row (an ID, quoted or not, a comma, an Event in capitals, a
 * comma), else after the first newline; 0 when there is no newline in the
 * 64 KiB past `mid` or the row would start at or past `end`. A guess either way: the caller
 * checks it against where the first reader's rows end.
 */
uint64_t sw_log_split_point(int fd, uint64_t mid, uint64_t end);

#endif
