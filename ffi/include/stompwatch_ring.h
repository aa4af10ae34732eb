/*
 * stompwatch_ring.h: the one description of the shared-memory ring between a
 * traced process (producer: the hook, or any caller of the producer API) and
 * the daemon (consumer, through ffi/bindings.ts which mirrors every offset).
 *
 * A ring is a file `{pid}.ring` in the daemon's ring directory
 * (STOMPWATCH_RING_DIR, mode 0700). Layout of the file:
 *
 *   [0, 4096)                 struct sw_ring_header
 *   [4096, 4096 + 64 KiB)     watch table: SW_WATCH_MAX struct sw_watch_entry,
 *                             written by the daemon under a seqlock
 *   [SW_DATA_OFFSET, +cap)    data: variable-length records, 16-byte aligned
 *
 * Discipline (after the Linux perf ring): producers reserve space with a CAS
 * on `head` (many threads of one process), write the record, then publish it
 * by storing its `stamp` with release ordering. The consumer reads the record
 * at `tail` once `stamp == SW_STAMP(tail)`, and advances `tail` (release)
 * when done. Positions are absolute byte counts that never wrap in practice;
 * the offset in the data area is `pos & (cap - 1)`. A record never straddles
 * the end of the data area: the producer fills the rest with a PAD record.
 * When the ring is full the producer waits (backpressure); it gives up, and
 * counts what it could not deliver, only once the consumer's heartbeat is
 * older than SW_CONSUMER_TIMEOUT_NS. A consumer that is merely stalled
 * (stopped, paused, starved) gets the ring back once its heartbeat moves:
 * the producer then publishes a GAP record first, then traces on. A consumer
 * process that no longer exists is gone for good.
 */
#ifndef STOMPWATCH_RING_H
#define STOMPWATCH_RING_H

#include <stddef.h>
#include <stdint.h>

#define SW_RING_MAGIC 0x474e495257504d53ULL /* "SMPWRING" little-endian */
#define SW_RING_VERSION 1u
#define SW_HEADER_SIZE 4096u
#define SW_TABLE_OFFSET 4096u
#define SW_TABLE_SIZE 65536u
#define SW_DATA_OFFSET (SW_TABLE_OFFSET + SW_TABLE_SIZE)
#define SW_DEFAULT_CAPACITY (64u << 20) /* power of two */
#define SW_CONSUMER_TIMEOUT_NS 2000000000ull
#define SW_CHUNK_MAX (4u << 20) /* largest DUMP_DATA payload */

/* Commit stamp of the record starting at absolute position `pos`. */
#define SW_STAMP(pos) ((uint32_t)((pos) >> 3) | 1u)

/* Header flags. */
#define SW_FLAG_LAUNCH_BLOCKING 0x1u /* ASCEND_LAUNCH_BLOCKING=1 in the job */
#define SW_FLAG_CONSUMER_GONE 0x2u   /* the consumer process is gone: pass-through for good */
#define SW_FLAG_EXITED 0x4u          /* producer process ran its exit handler */
#define SW_FLAG_STALLED 0x8u         /* consumer silent: pass-through until its heartbeat moves */

struct sw_ring_header {
  uint64_t magic;          /* 0 */
  uint32_t version;        /* 8 */
  uint32_t header_size;    /* 12: SW_HEADER_SIZE */
  uint64_t data_offset;    /* 16: SW_DATA_OFFSET */
  uint64_t capacity;       /* 24: bytes of data area, power of two */
  int32_t pid;             /* 32 */
  uint32_t flags;          /* 36: SW_FLAG_* */
  uint64_t start_ns;       /* 40: CLOCK_REALTIME when the ring was made */
  uint64_t dropped_events; /* 48: records given up on (consumer gone or stalled) */
  uint64_t dropped_bytes;  /* 56 */
  uint64_t head;           /* 64: producers' reservation position */
  uint8_t pad_producer[56];
  uint64_t tail;           /* 128: consumer position */
  uint64_t heartbeat_ns;   /* 136: consumer's last sign of life */
  int32_t consumer_pid;    /* 144: 0 until a consumer attaches */
  uint32_t checksum_algo;  /* 148: SW_CHECKSUM_* the producer uses */
  uint8_t pad_consumer[40];
  uint32_t table_seq;      /* 192: seqlock, odd while the daemon writes */
  uint32_t table_count;    /* 196: entries in use in the watch table */
  uint8_t pad_table[56];
  char cli_watch[512];     /* 256: the job's --watch value, NUL-terminated */
  char command[1024];      /* 768: the job's command line, NUL-terminated */
  uint32_t oom_snapshot;   /* 1792: OOM_SNAPSHOT_ENABLE of the job: 0 off, 1 state and history, 2 state */
  char oom_path[1024];     /* 1796: OOM_SNAPSHOT_PATH (default: its working directory), absolute */
};

/* The offsets written beside the fields are the layout: the compiler holds
 * them here, and a test holds ffi/bindings.ts to what it compiled
 * (stompwatch_layout in daemon/ring_layout.c). */
#define SW_LAYOUT(type, field, at) _Static_assert(offsetof(type, field) == (at), #type "." #field " is not at " #at)
SW_LAYOUT(struct sw_ring_header, magic, 0);
SW_LAYOUT(struct sw_ring_header, version, 8);
SW_LAYOUT(struct sw_ring_header, header_size, 12);
SW_LAYOUT(struct sw_ring_header, data_offset, 16);
SW_LAYOUT(struct sw_ring_header, capacity, 24);
SW_LAYOUT(struct sw_ring_header, pid, 32);
SW_LAYOUT(struct sw_ring_header, flags, 36);
SW_LAYOUT(struct sw_ring_header, start_ns, 40);
SW_LAYOUT(struct sw_ring_header, dropped_events, 48);
SW_LAYOUT(struct sw_ring_header, dropped_bytes, 56);
SW_LAYOUT(struct sw_ring_header, head, 64);
SW_LAYOUT(struct sw_ring_header, tail, 128);
SW_LAYOUT(struct sw_ring_header, heartbeat_ns, 136);
SW_LAYOUT(struct sw_ring_header, consumer_pid, 144);
SW_LAYOUT(struct sw_ring_header, checksum_algo, 148);
SW_LAYOUT(struct sw_ring_header, table_seq, 192);
SW_LAYOUT(struct sw_ring_header, table_count, 196);
SW_LAYOUT(struct sw_ring_header, cli_watch, 256);
SW_LAYOUT(struct sw_ring_header, command, 768);
SW_LAYOUT(struct sw_ring_header, oom_snapshot, 1792);
SW_LAYOUT(struct sw_ring_header, oom_path, 1796);
_Static_assert(sizeof(struct sw_ring_header) == 2824, "struct sw_ring_header is not 2824 bytes");
_Static_assert(sizeof(struct sw_ring_header) <= SW_HEADER_SIZE, "struct sw_ring_header overflows SW_HEADER_SIZE");

#define SW_CHECKSUM_XXH3 0u
#define SW_CHECKSUM_CRC64_MSMEMSCOPE 1u

/* Watch table entry, written by the daemon only. */
#define SW_WATCH_MAX 256u
#define SW_OP_NAME_MAX 96u
#define SW_WATCH_FULL_CONTENT 0x1u
#define SW_WATCH_HOST 0x2u /* the block is host memory (a CPU tensor): read in place, no runtime copy */

struct sw_watch_entry {
  uint32_t id;        /* 0: daemon-assigned, > 0, never reused in a ring */
  uint32_t flags;     /* 4: SW_WATCH_* */
  uint64_t addr;      /* 8 */
  uint64_t len;       /* 16 */
  int64_t dump_nums;  /* 24: -1 unlimited; counts before/after pairs */
  uint8_t pad[32];    /* 32 */
  char start_op[SW_OP_NAME_MAX]; /* 64: window opens at this op ("" = now) */
  char end_op[SW_OP_NAME_MAX];   /* 160: window closes after it ("" = remove) */
}; /* 256 bytes */
SW_LAYOUT(struct sw_watch_entry, id, 0);
SW_LAYOUT(struct sw_watch_entry, flags, 4);
SW_LAYOUT(struct sw_watch_entry, addr, 8);
SW_LAYOUT(struct sw_watch_entry, len, 16);
SW_LAYOUT(struct sw_watch_entry, dump_nums, 24);
SW_LAYOUT(struct sw_watch_entry, start_op, 64);
SW_LAYOUT(struct sw_watch_entry, end_op, 160);
_Static_assert(sizeof(struct sw_watch_entry) == 256, "struct sw_watch_entry is not 256 bytes");
_Static_assert(SW_WATCH_MAX * sizeof(struct sw_watch_entry) == SW_TABLE_SIZE, "the watch table does not fill its area");

/* Record header and the common fixed part: 64 bytes, then `name_len` bytes
 * of name (no NUL) padded to 8, then a type-specific payload. */
enum sw_record_type {
  SW_REC_PAD = 1,          /* skip to the end of the data area */
  SW_REC_PROC_START = 2,   /* name = command line */
  SW_REC_PROC_EXIT = 3,    /* result = exit status if known */
  SW_REC_ALLOC = 4,        /* addr, len = size asked, result = aclError, aux = pool,
                              id = the runtime call (enum sw_alloc_call); failed
                              (SW_REC_FLAG_FAILED): addr = the device's free bytes */
  SW_REC_FREE = 5,         /* addr, result = aclError, aux = pool */
  SW_REC_OP_BEGIN = 6,     /* id = op seq, name = op type, payload = aux x {addr,len} outputs */
  SW_REC_OP_END = 7,       /* id = op seq, result = aclError */
  SW_REC_MARK = 8,         /* name = message */
  SW_REC_RANGE_START = 9,  /* id = range id, name = message */
  SW_REC_RANGE_END = 10,   /* id = range id */
  SW_REC_DUMP = 11,        /* see below */
  SW_REC_DUMP_DATA = 12,   /* id = dump seq, addr = offset, len = bytes, payload = bytes */
  SW_REC_WATCH_CLOSED = 13,/* aux = watch id: its window ended or dump_nums ran out */
  SW_REC_WINDOW_OPEN = 14, /* aux = watch id (CLI window), addr/len = block, result = outid */
  SW_REC_OP = 15,          /* a whole op launch while nothing may be watched: name = op type,
                              ts = launch time, result = aclError; no outputs (aux = 0) */
  SW_REC_GAP = 16,         /* first record after a stalled consumer came back: addr = dropped_events
                              so far (the running total, not this gap's), id = dropped_bytes so far,
                              len = ns the consumer's heartbeat stood still, ts = when tracing resumed */
  SW_REC_ACCESS = 17       /* a framework op's access to a tensor: addr, len = bytes, aux = SW_ACCESS_*,
                              name = op TAB dtype TAB shape TAB python stack (from the Python client) */
};

/* Kinds of access (aux of ACCESS), as the event log's Event Type. */
enum sw_access { SW_ACCESS_READ = 0, SW_ACCESS_WRITE = 1, SW_ACCESS_UNKNOWN = 2 };

/* Pools (aux of ALLOC/FREE), as the event log's Event Type. */
enum sw_pool { SW_POOL_HAL = 0, SW_POOL_HOST = 1, SW_POOL_PTA = 2 };

/* The runtime call behind an ALLOC (its id), for GET /processes/{pid}/blocks. */
enum sw_alloc_call { SW_CALL_MALLOC = 0, SW_CALL_MALLOC_ALIGN32 = 1, SW_CALL_MALLOC_CACHED = 2 };

/* Record flags. */
#define SW_REC_FLAG_FAILED 0x1u   /* ALLOC that failed (OOM snapshots) */
#define SW_REC_FLAG_AFTER 0x2u    /* DUMP: after the op (else before) */
#define SW_REC_FLAG_CONTENT 0x4u  /* DUMP: DUMP_DATA records with id = dump seq precede it */
#define SW_REC_FLAG_OUTSIDE 0x8u  /* DUMP: payload is struct sw_dump_payload_outside */
#define SW_REC_FLAG_FRAMEWORK 0x10u /* OP_BEGIN/OP_END: a framework (Aten) op, not a runtime launch */

/* Watch ids of windows opened by the CLI --watch spec carry this bit. */
#define SW_CLI_WATCH_BIT 0x80000000u

struct sw_record {
  uint32_t stamp;    /* 0: SW_STAMP(pos), stored last with release */
  uint16_t type;     /* 4: enum sw_record_type */
  uint16_t flags;    /* 6: SW_REC_FLAG_* */
  uint32_t size;     /* 8: whole record incl. this header, multiple of 16 */
  uint32_t tid;      /* 12 */
  uint64_t ts_ns;    /* 16: CLOCK_REALTIME */
  int32_t device;    /* 24: -1 = host */
  int32_t result;    /* 28 */
  uint64_t addr;     /* 32 */
  uint64_t len;      /* 40 */
  uint64_t id;       /* 48 */
  uint32_t name_len; /* 56 */
  uint32_t aux;      /* 60 */
};                   /* 64; name at 64, payload at 64 + align8(name_len) */
SW_LAYOUT(struct sw_record, stamp, 0);
SW_LAYOUT(struct sw_record, type, 4);
SW_LAYOUT(struct sw_record, flags, 6);
SW_LAYOUT(struct sw_record, size, 8);
SW_LAYOUT(struct sw_record, tid, 12);
SW_LAYOUT(struct sw_record, ts_ns, 16);
SW_LAYOUT(struct sw_record, device, 24);
SW_LAYOUT(struct sw_record, result, 28);
SW_LAYOUT(struct sw_record, addr, 32);
SW_LAYOUT(struct sw_record, len, 40);
SW_LAYOUT(struct sw_record, id, 48);
SW_LAYOUT(struct sw_record, name_len, 56);
SW_LAYOUT(struct sw_record, aux, 60);
_Static_assert(sizeof(struct sw_record) == 64, "struct sw_record is not 64 bytes");

/*
 * DUMP: one before or after sample of one watched block around one op.
 *   id = op seq of the op (its OP_BEGIN came earlier on the same thread),
 *   aux = watch id, addr/len = the block, result = outid,
 *   flags = AFTER?, CONTENT?; payload = { uint64_t checksum; uint64_t dump_seq; }
 * With CONTENT, DUMP_DATA chunks of the same dump_seq precede it in order.
 */
struct sw_dump_payload {
  uint64_t checksum;
  uint64_t dump_seq;
};
_Static_assert(sizeof(struct sw_dump_payload) == 16, "struct sw_dump_payload is not 16 bytes");

/* DUMP of a host block around a framework op: also the checksum of the
 * block's bytes outside every extent the op may write (its outputs and the
 * arguments its schema marks written), so a change is allowed only where
 * the op may write, at byte granularity. */
struct sw_dump_payload_outside {
  struct sw_dump_payload dump;
  uint64_t outside;
};
_Static_assert(sizeof(struct sw_dump_payload_outside) == 24, "struct sw_dump_payload_outside is not 24 bytes");

#define SW_ALIGN8(n) (((n) + 7u) & ~(uint64_t)7u)
/* Records are 16-byte aligned: the gap left at the end of the data area is
 * then at least 16 bytes, room for the stamp, type and size of a PAD
 * record, and an op record with a short name and one output takes 96
 * bytes, not 128 (the hook writes one per op launch). */
#define SW_RECORD_ALIGN 16u
#define SW_ALIGN_RECORD(n) (((n) + 15u) & ~(uint64_t)15u)

#endif
