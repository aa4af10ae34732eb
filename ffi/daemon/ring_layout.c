/*
 * ring_layout.c: the layout stompwatch_ring.h compiles to (and the fields of
 * struct sw_watch_spec), as text, so that a test can hold ffi/bindings.ts,
 * which mirrors them by hand, to what the compiler made of the header. Each
 * line is `NAME VALUE`, NAME the constant's path in bindings.ts.
 */
#include <stddef.h>
#include <stdio.h>

#include "stompwatch_ring.h"
#include "sw_common.h"

#define FIELD_SIZE(type, field) sizeof(((type *)0)->field)
#define HEADER(name, field) {"RING.H." name, offsetof(struct sw_ring_header, field)}
#define ENTRY(name, field) {"RING.W." name, offsetof(struct sw_watch_entry, field)}
#define RECORD(name, field) {"REC.F." name, offsetof(struct sw_record, field)}
#define SPEC(name, field) {"SPEC.F." name, offsetof(struct sw_watch_spec, field) / sizeof(uint32_t)}

static const struct {
  const char *name;
  unsigned long long value;
} LAYOUT[] = {
    {"RING.MAGIC", SW_RING_MAGIC},
    {"RING.VERSION", SW_RING_VERSION},
    {"RING.TABLE_OFFSET", SW_TABLE_OFFSET},
    {"RING.DATA_OFFSET", SW_DATA_OFFSET},
    {"RING.WATCH_MAX", SW_WATCH_MAX},
    {"RING.WATCH_ENTRY_SIZE", sizeof(struct sw_watch_entry)},
    {"RING.OP_NAME_MAX", SW_OP_NAME_MAX},
    {"RING.WATCH_FULL_CONTENT", SW_WATCH_FULL_CONTENT},
    {"RING.WATCH_HOST", SW_WATCH_HOST},
    {"RING.CLI_WATCH_BIT", SW_CLI_WATCH_BIT},
    {"RING.FLAG_LAUNCH_BLOCKING", SW_FLAG_LAUNCH_BLOCKING},
    {"RING.FLAG_CONSUMER_GONE", SW_FLAG_CONSUMER_GONE},
    {"RING.FLAG_EXITED", SW_FLAG_EXITED},
    {"RING.FLAG_STALLED", SW_FLAG_STALLED},
    {"RING.CHECKSUM_XXH3", SW_CHECKSUM_XXH3},
    {"RING.CHECKSUM_CRC64_MSMEMSCOPE", SW_CHECKSUM_CRC64_MSMEMSCOPE},
    HEADER("magic", magic),
    HEADER("version", version),
    HEADER("capacity", capacity),
    HEADER("pid", pid),
    HEADER("flags", flags),
    HEADER("startNs", start_ns),
    HEADER("droppedEvents", dropped_events),
    HEADER("droppedBytes", dropped_bytes),
    HEADER("head", head),
    HEADER("tail", tail),
    HEADER("heartbeatNs", heartbeat_ns),
    HEADER("consumerPid", consumer_pid),
    HEADER("checksumAlgo", checksum_algo),
    HEADER("tableSeq", table_seq),
    HEADER("cliWatch", cli_watch),
    {"RING.H.cliWatchSize", FIELD_SIZE(struct sw_ring_header, cli_watch)},
    HEADER("command", command),
    {"RING.H.commandSize", FIELD_SIZE(struct sw_ring_header, command)},
    HEADER("oomSnapshot", oom_snapshot),
    HEADER("oomPath", oom_path),
    {"RING.H.oomPathSize", FIELD_SIZE(struct sw_ring_header, oom_path)},
    ENTRY("id", id),
    ENTRY("flags", flags),
    ENTRY("addr", addr),
    ENTRY("len", len),
    ENTRY("dumpNums", dump_nums),
    ENTRY("startOp", start_op),
    ENTRY("endOp", end_op),
    {"REC.SIZE", sizeof(struct sw_record)},
    {"REC.PAD", SW_REC_PAD},
    {"REC.PROC_START", SW_REC_PROC_START},
    {"REC.PROC_EXIT", SW_REC_PROC_EXIT},
    {"REC.ALLOC", SW_REC_ALLOC},
    {"REC.FREE", SW_REC_FREE},
    {"REC.OP_BEGIN", SW_REC_OP_BEGIN},
    {"REC.OP_END", SW_REC_OP_END},
    {"REC.MARK", SW_REC_MARK},
    {"REC.RANGE_START", SW_REC_RANGE_START},
    {"REC.RANGE_END", SW_REC_RANGE_END},
    {"REC.DUMP", SW_REC_DUMP},
    {"REC.DUMP_DATA", SW_REC_DUMP_DATA},
    {"REC.WATCH_CLOSED", SW_REC_WATCH_CLOSED},
    {"REC.WINDOW_OPEN", SW_REC_WINDOW_OPEN},
    {"REC.OP", SW_REC_OP},
    {"REC.GAP", SW_REC_GAP},
    {"REC.ACCESS", SW_REC_ACCESS},
    {"REC.ACCESS_READ", SW_ACCESS_READ},
    {"REC.ACCESS_WRITE", SW_ACCESS_WRITE},
    {"REC.ACCESS_UNKNOWN", SW_ACCESS_UNKNOWN},
    {"REC.FLAG_FAILED", SW_REC_FLAG_FAILED},
    {"REC.FLAG_AFTER", SW_REC_FLAG_AFTER},
    {"REC.FLAG_CONTENT", SW_REC_FLAG_CONTENT},
    {"REC.FLAG_OUTSIDE", SW_REC_FLAG_OUTSIDE},
    {"REC.FLAG_FRAMEWORK", SW_REC_FLAG_FRAMEWORK},
    {"REC.POOL_HAL", SW_POOL_HAL},
    {"REC.POOL_HOST", SW_POOL_HOST},
    {"REC.POOL_PTA", SW_POOL_PTA},
    RECORD("stamp", stamp),
    RECORD("type", type),
    RECORD("flags", flags),
    RECORD("size", size),
    RECORD("tid", tid),
    RECORD("tsNs", ts_ns),
    RECORD("device", device),
    RECORD("result", result),
    RECORD("addr", addr),
    RECORD("len", len),
    RECORD("id", id),
    RECORD("nameLen", name_len),
    RECORD("aux", aux),
    {"SPEC.WORDS", sizeof(struct sw_watch_spec) / sizeof(uint32_t)},
    SPEC("error", error),
    SPEC("fields", fields),
    SPEC("outid", outid),
    SPEC("fullContent", full_content),
    SPEC("startAt", start_at),
    SPEC("startLen", start_len),
    SPEC("endAt", end_at),
    SPEC("endLen", end_len),
    SPEC("detailAt", detail_at),
    SPEC("detailLen", detail_len),
    {"SPEC.OK", SW_SPEC_OK},
    {"SPEC.NO_COMMA", SW_SPEC_ERR_NO_COMMA},
    {"SPEC.TOO_MANY_FIELDS", SW_SPEC_ERR_TOO_MANY_FIELDS},
    {"SPEC.END_MISSING", SW_SPEC_ERR_END_MISSING},
    {"SPEC.END_WHITESPACE", SW_SPEC_ERR_END_WHITESPACE},
    {"SPEC.END_CONTROL", SW_SPEC_ERR_END_CONTROL},
    {"SPEC.END_TOO_LONG", SW_SPEC_ERR_END_TOO_LONG},
    {"SPEC.THIRD_FIELD", SW_SPEC_ERR_THIRD_FIELD},
    {"SPEC.OUTID_MISSING", SW_SPEC_ERR_OUTID_MISSING},
    {"SPEC.OUTID_NOT_NUMBER", SW_SPEC_ERR_OUTID_NOT_NUMBER},
    {"SPEC.OUTID_LEADING_ZERO", SW_SPEC_ERR_OUTID_LEADING_ZERO},
    {"SPEC.OUTID_TOO_LARGE", SW_SPEC_ERR_OUTID_TOO_LARGE},
    {"SPEC.START_MISSING", SW_SPEC_ERR_START_MISSING},
    {"SPEC.START_WHITESPACE", SW_SPEC_ERR_START_WHITESPACE},
    {"SPEC.START_CONTROL", SW_SPEC_ERR_START_CONTROL},
    {"SPEC.START_TOO_LONG", SW_SPEC_ERR_START_TOO_LONG},
    {"SPEC.MAX_OUTID", SW_SPEC_MAX_OUTID},
};

/* Writes the table into `out` (NUL-terminated); returns the bytes it needs,
 * without the NUL: a result >= cap means `out` was too small. */
SW_EXPORT uint64_t stompwatch_layout(char *out, uint64_t cap) {
  uint64_t used = 0;
  for (size_t i = 0; i < sizeof LAYOUT / sizeof LAYOUT[0]; i++) {
    int n = snprintf(cap > used ? out + used : NULL, cap > used ? (size_t)(cap - used) : 0, "%s %llu\n",
                     LAYOUT[i].name, LAYOUT[i].value);
    if (n > 0) used += (uint64_t)n;
  }
  return used;
}
