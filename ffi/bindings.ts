/**
 * The only door into native code: a hand-written `Deno.dlopen` table for
 * `libstompwatch_daemon.so` (the consumer side of the ring, the ring
 * directory, event rows, the --watch grammar, and the analyses' native parts:
 * opening a log a person named, check_leaks' first pass and replay), and the
 * ring layout of
 * `ffi/include/stompwatch_ring.h` mirrored offset for offset. Change both
 * together: test/ffi/layout_test.ts compares every constant below with what
 * the compiler made of the header.
 *
 * @module
 */

// This file's folder, ffi/, as a path, not a URL's: a checkout under "my
// logs" is not "my%20logs". ./stompwatch runs each analysis from a bundle
// in ffi/build/ that holds this file: from there ffi/ is the folder above.
const own = decodeURIComponent(new URL(".", import.meta.url).pathname);
const here = own.endsWith("/ffi/build/") ? own.slice(0, -"build/".length) : own;

/** Path of the job-side library, which `run` and `env` preload into jobs. */
export const HOOK_LIBRARY = `${here}build/libstompwatch_hook.so`;

/** Path of the daemon-side library, the one this file opens. */
export const DAEMON_LIBRARY = `${here}build/libstompwatch_daemon.so`;

/**
 * Path of the snapshot converter (`ffi/analysis/`), opened on first use by
 * {@link convertSnapshotNative} only: commands that never convert never
 * load it.
 */
export const ANALYSIS_LIBRARY = `${here}build/libstompwatch_analysis.so`;

/** Header and table layout, from stompwatch_ring.h. */
export const RING = {
  MAGIC: 0x474e495257504d53n,
  VERSION: 1,
  TABLE_OFFSET: 4096,
  DATA_OFFSET: 4096 + 65536,
  WATCH_MAX: 256,
  WATCH_ENTRY_SIZE: 256,
  OP_NAME_MAX: 96,
  WATCH_FULL_CONTENT: 0x1,
  /** The block is host memory: the hook reads it in place. */
  WATCH_HOST: 0x2,
  CLI_WATCH_BIT: 0x80000000,
  FLAG_LAUNCH_BLOCKING: 0x1,
  FLAG_CONSUMER_GONE: 0x2,
  FLAG_EXITED: 0x4,
  /** The daemon was silent: the hook passes through until its heartbeat moves. */
  FLAG_STALLED: 0x8,
  CHECKSUM_XXH3: 0,
  CHECKSUM_CRC64_MSMEMSCOPE: 1,
  /** struct sw_ring_header field offsets. */
  H: {
    magic: 0,
    version: 8,
    capacity: 24,
    pid: 32,
    flags: 36,
    startNs: 40,
    droppedEvents: 48,
    droppedBytes: 56,
    head: 64,
    tail: 128,
    heartbeatNs: 136,
    consumerPid: 144,
    checksumAlgo: 148,
    tableSeq: 192,
    cliWatch: 256,
    cliWatchSize: 512,
    command: 768,
    commandSize: 1024,
    oomSnapshot: 1792,
    oomPath: 1796,
    oomPathSize: 1024,
  },
  /** struct sw_watch_entry field offsets. */
  W: {
    id: 0,
    flags: 4,
    addr: 8,
    len: 16,
    dumpNums: 24,
    startOp: 64,
    endOp: 160,
  },
} as const;

/** Record layout: struct sw_record and friends. */
export const REC = {
  SIZE: 64,
  PAD: 1,
  PROC_START: 2,
  PROC_EXIT: 3,
  ALLOC: 4,
  FREE: 5,
  OP_BEGIN: 6,
  OP_END: 7,
  MARK: 8,
  RANGE_START: 9,
  RANGE_END: 10,
  DUMP: 11,
  DUMP_DATA: 12,
  WATCH_CLOSED: 13,
  WINDOW_OPEN: 14,
  /** A whole op launch while nothing may be watched (OP_BEGIN's fields). */
  OP: 15,
  /** Tracing resumed after a stall: addr = events lost so far, id = bytes, len = ns silent. */
  GAP: 16,
  /** A framework op's access to a tensor (aux = ACCESS_*). */
  ACCESS: 17,
  ACCESS_READ: 0,
  ACCESS_WRITE: 1,
  ACCESS_UNKNOWN: 2,
  FLAG_FAILED: 0x1,
  FLAG_AFTER: 0x2,
  FLAG_CONTENT: 0x4,
  /** DUMP: the payload's third u64 is the checksum outside the op's writable extents. */
  FLAG_OUTSIDE: 0x8,
  /** OP_BEGIN/OP_END of a framework (Aten) op. */
  FLAG_FRAMEWORK: 0x10,
  POOL_HAL: 0,
  POOL_HOST: 1,
  POOL_PTA: 2,
  /** Field offsets inside a record. */
  F: {
    stamp: 0,
    type: 4,
    flags: 6,
    size: 8,
    tid: 12,
    tsNs: 16,
    device: 24,
    result: 28,
    addr: 32,
    len: 40,
    id: 48,
    nameLen: 56,
    aux: 60,
  },
} as const;

/**
 * struct sw_watch_spec (ffi/common/sw_common.h), read as 32-bit words: `F`
 * gives each field's index, the rest are its error codes.
 */
export const SPEC = {
  WORDS: 10,
  F: {
    error: 0,
    fields: 1,
    outid: 2,
    fullContent: 3,
    startAt: 4,
    startLen: 5,
    endAt: 6,
    endLen: 7,
    detailAt: 8,
    detailLen: 9,
  },
  OK: 0,
  NO_COMMA: 1,
  TOO_MANY_FIELDS: 2,
  END_MISSING: 3,
  END_WHITESPACE: 4,
  END_CONTROL: 5,
  END_TOO_LONG: 6,
  THIRD_FIELD: 7,
  OUTID_MISSING: 8,
  OUTID_NOT_NUMBER: 9,
  OUTID_LEADING_ZERO: 10,
  OUTID_TOO_LARGE: 11,
  START_MISSING: 12,
  START_WHITESPACE: 13,
  START_CONTROL: 14,
  START_TOO_LONG: 15,
  MAX_OUTID: 2147483647,
} as const;

/*
 * What the offline analyses call, in three tables that {@link callsOf}
 * binds alone: binding all of the daemon's symbols took 12 ms of every
 * such command, and each symbol bound costs about 0.35 ms more (the whole
 * offline table took 6.5 ms of a snapshot, which needs only the log's).
 */

/** Opening and reading a log, and the system's words for a failure. */
const logSymbols = {
  stompwatch_fd_close: { parameters: ["i32"], result: "i32" },
  // Off the event loop: a slow filesystem must not stall the daemon.
  stompwatch_log_open: {
    parameters: ["buffer"],
    result: "i32",
    nonblocking: true,
  },
  stompwatch_log_pread: {
    parameters: ["i32", "buffer", "u64", "u64"],
    result: "i64",
    nonblocking: true,
  },
  /** The same call on the event loop, for reads too small to send away. */
  stompwatch_log_pread_now: {
    name: "stompwatch_log_pread",
    parameters: ["i32", "buffer", "u64", "u64"],
    result: "i64",
  },
  stompwatch_log_size: { parameters: ["i32"], result: "i64" },
  stompwatch_strerror: {
    parameters: ["i32", "buffer", "u32"],
    result: "u32",
  },
} as const;

/** check_leaks' native passes. */
const leakSymbols = {
  // The devices' windows at once, on two threads; off the event loop.
  stompwatch_leak_replay_windows: {
    parameters: [
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "f64",
      "buffer",
      "f64",
      "buffer",
      "buffer",
    ],
    result: "i32",
    nonblocking: true,
  },
  // The listed leaks' rows, read back for their details.
  stompwatch_rows_at: {
    parameters: ["buffer", "buffer", "buffer", "buffer"],
    result: "i32",
    nonblocking: true,
  },
  stompwatch_leak_scan: {
    parameters: [
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
    ],
    result: "i32",
    nonblocking: true,
  },
} as const;

/** compare's native passes. */
const compareSymbols = {
  stompwatch_compare_read: {
    parameters: ["buffer"],
    result: "i32",
    nonblocking: true,
  },
  stompwatch_compare_diff: {
    parameters: ["buffer"],
    result: "i32",
    nonblocking: true,
  },
  stompwatch_compare_take: {
    parameters: [
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
    ],
    result: "void",
  },
  stompwatch_compare_lines: {
    parameters: ["buffer", "buffer", "u64"],
    result: "u64",
  },
  stompwatch_compare_free: { parameters: ["buffer"], result: "void" },
  stompwatch_myers_diff: {
    parameters: [
      "buffer",
      "u32",
      "buffer",
      "u32",
      "f64",
      "f64",
      "buffer",
      "buffer",
      "buffer",
    ],
    result: "i64",
  },
} as const;

const symbols = {
  ...logSymbols,
  ...leakSymbols,
  ...compareSymbols,
  stompwatch_ring_attach: {
    parameters: ["buffer", "buffer"],
    result: "pointer",
  },
  stompwatch_ring_detach: { parameters: ["pointer", "u64"], result: "void" },
  stompwatch_ring_advance: { parameters: ["pointer", "u64"], result: "void" },
  stompwatch_ring_head: { parameters: ["pointer"], result: "u64" },
  stompwatch_ring_heartbeat: { parameters: ["pointer"], result: "void" },
  stompwatch_table_publish: {
    parameters: ["pointer", "buffer", "u32"],
    result: "i32",
  },
  stompwatch_checksum: {
    parameters: ["u32", "buffer", "usize"],
    result: "u64",
  },
  stompwatch_dir_make: { parameters: ["buffer"], result: "i32" },
  stompwatch_dir_rings: {
    parameters: ["buffer", "buffer", "u64"],
    result: "i64",
  },
  stompwatch_dir_remove: { parameters: ["buffer"], result: "i32" },
  stompwatch_ring_dir_make: { parameters: ["buffer"], result: "i32" },
  stompwatch_ring_dir_reap: { parameters: ["buffer", "i32"], result: "i32" },
  stompwatch_file_remove: { parameters: ["buffer"], result: "i32" },
  stompwatch_pid_alive: { parameters: ["i32"], result: "i32" },
  stompwatch_dir_names: {
    parameters: ["buffer", "buffer", "buffer", "u64"],
    result: "i64",
  },
  stompwatch_pid_started: { parameters: ["i32"], result: "u64" },
  // Off the event loop: a slow filesystem must not stall the daemon.
  stompwatch_now_ns: { parameters: [], result: "u64" },
  stompwatch_layout: { parameters: ["buffer", "u64"], result: "u64" },
  stompwatch_watch_spec_parse: {
    parameters: ["buffer", "u64", "buffer"],
    result: "u32",
  },
  stompwatch_event_ns: { parameters: [], result: "u64" },
  stompwatch_memory_row: {
    parameters: [
      "buffer",
      "u32",
      "u32",
      "u32",
      "f64",
      "f64",
      "i32",
      "u32",
      "i32",
      "f64",
      "f64",
      "f64",
      "f64",
      "i32",
    ],
    result: "u32",
  },
} as const;

type Lib = Deno.DynamicLibrary<typeof symbols>["symbols"];
let lib: Lib | undefined;

/**
 * Opens the daemon-side library once.
 *
 * @example
 * ```ts
 * const native = daemonLibrary();
 * ```
 */
export function daemonLibrary(): Lib {
  return lib ??= open(symbols);
}

/** The daemon library with the calls of `table` bound. */
function open<T extends Deno.ForeignLibraryInterface>(
  table: T,
): Deno.DynamicLibrary<T>["symbols"] {
  try {
    return Deno.dlopen(DAEMON_LIBRARY, table).symbols;
  } catch (e) {
    // Not granted: main.ts words that for a person, Deno's advice left out.
    if (e instanceof Deno.errors.NotCapable) throw e;
    throw new NativeLibraryError(
      `Cannot load the native library: ${DAEMON_LIBRARY} (${
        (e as Error).message
      }); run make -C ffi or start through ./stompwatch`,
    );
  }
}

/** The offline tables bound so far, each on its own. */
const boundTables = new Map<object, unknown>();

/**
 * The calls of an offline table (`logSymbols`, `leakSymbols`,
 * `compareSymbols`): the daemon library's whole table when it is open
 * already, else that table bound alone, once.
 *
 * @example
 * ```ts ignore
 * const fd = await callsOf(logSymbols).stompwatch_log_open(cPath(path));
 * ```
 */
function callsOf<T extends Deno.ForeignLibraryInterface>(
  table: T,
): Deno.DynamicLibrary<T>["symbols"] {
  if (lib) return lib as unknown as Deno.DynamicLibrary<T>["symbols"];
  let calls = boundTables.get(table);
  if (!calls) boundTables.set(table, calls = open(table));
  return calls as Deno.DynamicLibrary<T>["symbols"];
}

/** The native library is missing or cannot be loaded: said as it is. */
export class NativeLibraryError extends Error {
  override name = "NativeLibraryError";
}

/**
 * The layout the compiler made of stompwatch_ring.h (and of struct
 * sw_watch_spec), keyed by the paths of the constants above
 * (`RING.H.head`, `REC.ALLOC`, `SPEC.F.error`).
 *
 * @example
 * ```ts
 * compiledLayout().get("RING.H.head"); // 64n
 * ```
 */
export function compiledLayout(): Map<string, bigint> {
  let out = new Uint8Array(8192);
  let n = Number(daemonLibrary().stompwatch_layout(out, BigInt(out.length)));
  if (n >= out.length) {
    out = new Uint8Array(n + 1);
    n = Number(daemonLibrary().stompwatch_layout(out, BigInt(out.length)));
  }
  const layout = new Map<string, bigint>();
  for (const line of new TextDecoder().decode(out.subarray(0, n)).split("\n")) {
    const [name, value] = line.split(" ");
    if (name) layout.set(name, BigInt(value));
  }
  return layout;
}

/** A `--watch` value as the native grammar split it. */
export interface NativeWatchSpec {
  /** SPEC.OK or one of the SPEC error codes. */
  error: number;
  /** Fields the value has. */
  fields: number;
  outid: number;
  fullContent: boolean;
  /** The start op; "" for `,end`. */
  start: string;
  end: string;
  /** The text an error is about. */
  detail: string;
}

/**
 * Splits a `--watch` value with the grammar the hook itself uses
 * (ffi/common/watch_spec.c), so both sides read a value the same way.
 *
 * @example
 * ```ts
 * parseWatchSpecNative("Fill:0，Add").end; // "Add"
 * ```
 */
export function parseWatchSpecNative(value: string): NativeWatchSpec {
  const bytes = encoder.encode(value);
  const words = new Uint32Array(SPEC.WORDS);
  daemonLibrary().stompwatch_watch_spec_parse(
    bytes,
    BigInt(bytes.length),
    words,
  );
  // The grammar answers in UTF-8 byte offsets; the text is cut from `value`
  // itself, so a BOM or a lone surrogate in a name comes back as it was.
  const f = SPEC.F;
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  const index = (byte: number) =>
    decoder.decode(bytes.subarray(0, byte)).length;
  const text = (at: number, len: number) =>
    value.slice(index(words[at]), index(words[at] + words[len]));
  return {
    error: words[f.error],
    fields: words[f.fields],
    outid: words[f.outid],
    fullContent: words[f.fullContent] !== 0,
    start: text(f.startAt, f.startLen),
    end: text(f.endAt, f.endLen),
    detail: text(f.detailAt, f.detailLen),
  };
}

/** A ring mapped into this process. */
export interface MappedRing {
  pointer: Deno.PointerObject;
  size: number;
  buffer: ArrayBuffer;
}

/**
 * Maps a ring file; null when it is not (yet) a complete ring.
 *
 * @example
 * ```ts
 * const ring = attachRing("/dev/shm/stompwatch-0/4242.ring");
 * ```
 */
export function attachRing(path: string): MappedRing | null {
  const size = new BigUint64Array(1);
  const pointer = daemonLibrary().stompwatch_ring_attach(cPath(path), size);
  if (pointer === null) return null;
  const bytes = Number(size[0]);
  const buffer = Deno.UnsafePointerView.getArrayBuffer(pointer, bytes);
  return { pointer, size: bytes, buffer };
}

/** Unmaps a ring; its buffer must not be used afterwards. */
export function detachRing(ring: MappedRing): void {
  daemonLibrary().stompwatch_ring_detach(ring.pointer, BigInt(ring.size));
}

/** Publishes the consumer position: everything before it may be reused. */
export function advanceRing(ring: MappedRing, tail: number): void {
  daemonLibrary().stompwatch_ring_advance(ring.pointer, BigInt(tail));
}

/** The producers' reservation position. */
export function ringHead(ring: MappedRing): number {
  return Number(daemonLibrary().stompwatch_ring_head(ring.pointer));
}

/** Tells the producers the daemon is alive. */
export function heartbeatRing(ring: MappedRing): void {
  daemonLibrary().stompwatch_ring_heartbeat(ring.pointer);
}

/** One watch as the hook's table holds it (struct sw_watch_entry). */
export interface TableEntry {
  id: number;
  fullContent: boolean;
  /** Host memory (a CPU tensor): read in place, not copied by the runtime. */
  host?: boolean;
  addr: number;
  length: number;
  /** -1 is unlimited. */
  dumpNums: number;
  /** Op names, at most OP_NAME_MAX - 1 bytes (checked at the edge). */
  start?: string;
  end?: string;
}

/** Packs `entries` in the layout of stompwatch_ring.h and publishes them. */
export function publishWatchTable(
  ring: MappedRing,
  entries: TableEntry[],
): void {
  if (entries.length > RING.WATCH_MAX) {
    throw new Error(
      `Cannot publish watch table: ${entries.length} entries exceed ${RING.WATCH_MAX}`,
    );
  }
  const size = RING.WATCH_ENTRY_SIZE, o = RING.W;
  const bytes = new Uint8Array(size * entries.length);
  const view = new DataView(bytes.buffer);
  entries.forEach((w, i) => {
    const base = i * size;
    view.setUint32(base + o.id, w.id, true);
    view.setUint32(
      base + o.flags,
      (w.fullContent ? RING.WATCH_FULL_CONTENT : 0) |
        (w.host ? RING.WATCH_HOST : 0),
      true,
    );
    view.setBigUint64(base + o.addr, BigInt(w.addr), true);
    view.setBigUint64(base + o.len, BigInt(w.length), true);
    view.setBigInt64(base + o.dumpNums, BigInt(w.dumpNums), true);
    // The NUL after each name is the zeroed rest of its field.
    if (w.start) bytes.set(encoder.encode(w.start), base + o.startOp);
    if (w.end) bytes.set(encoder.encode(w.end), base + o.endOp);
  });
  daemonLibrary().stompwatch_table_publish(ring.pointer, bytes, entries.length);
}

/** The native checksum of host bytes (algo: RING.CHECKSUM_*). */
export function nativeChecksum(algo: number, bytes: Uint8Array): bigint {
  return BigInt(
    daemonLibrary().stompwatch_checksum(algo, bytes, BigInt(bytes.length)),
  );
}

/** A MALLOC, FREE or OOM_DETAIL row of the event log, field by field. */
export interface MemoryRow {
  /** 0 MALLOC, 1 FREE, 2 OOM_DETAIL. */
  event: number;
  /** 0 HAL, 1 HOST, 2 PTA. */
  pool: number;
  id: number;
  ts: number;
  pid: number;
  tid: number;
  /** -1 for the host. */
  device: number;
  addr: number;
  allocationId: number;
  size: number;
  used: number;
  /** aclError of a failed allocation. */
  result: number;
}

/** Bytes {@linkcode writeMemoryRow} may write. */
export const MEMORY_ROW_ROOM = 400;

/**
 * Writes `row` natively at `out[at]` (which must have
 * {@linkcode MEMORY_ROW_ROOM} bytes free) and returns the position after
 * it: the same bytes as analysis/memscope_csv/event_rows.ts, several times faster.
 *
 * @example
 * ```ts
 * const out = new Uint8Array(MEMORY_ROW_ROOM);
 * const end = writeMemoryRow(out, 0, {
 *   event: 0, pool: 0, id: 1, ts: 5, pid: 1, tid: 1, device: 0,
 *   addr: 0x1000, allocationId: 1, size: 64, used: 64, result: 0,
 * });
 * ```
 */
export function writeMemoryRow(
  out: Uint8Array,
  at: number,
  row: MemoryRow,
): number {
  return daemonLibrary().stompwatch_memory_row(
    out,
    at,
    row.event,
    row.pool,
    row.id,
    row.ts,
    row.pid,
    row.tid,
    row.device,
    row.addr,
    row.allocationId,
    row.size,
    row.used,
    row.result,
  );
}

const encoder = new TextEncoder();
const cPath = (path: string) => encoder.encode(path + "\0");

/**
 * Makes a 0700 directory (in /dev/shm too, which Deno itself will not touch
 * without --allow-all); returns false when it cannot.
 *
 * @example
 * ```ts
 * makePrivateDir("/dev/shm/stompwatch.1");
 * ```
 */
export function makePrivateDir(path: string): boolean {
  return daemonLibrary().stompwatch_dir_make(cPath(path)) === 0;
}

/** Names of the complete rings in `dir` (`{pid}.ring`); null when it is gone. */
export function listRings(dir: string): string[] | null {
  const out = new Uint8Array(1 << 16);
  const n = Number(
    daemonLibrary().stompwatch_dir_rings(cPath(dir), out, BigInt(out.length)),
  );
  if (n < 0) return null;
  return new TextDecoder().decode(out.subarray(0, n)).split("\n").filter(
    Boolean,
  );
}

/** Removes one file; false when it was not there. */
export function removeFile(path: string): boolean {
  return daemonLibrary().stompwatch_file_remove(cPath(path)) === 0;
}

/**
 * Removes this process's own ring directory and the regular files in it;
 * false when it could not (a symlink, someone else's, or not empty of other
 * things). Never follows a symlink.
 *
 * @example
 * ```ts
 * removeRingDir("/dev/shm/stompwatch.4242.81234.1a2b3c4d"); // true
 * ```
 */
export function removeRingDir(dir: string): boolean {
  return daemonLibrary().stompwatch_dir_remove(cPath(dir)) === 0;
}

/**
 * Makes a 0700 ring directory holding `.lock`, locked (flock) through the
 * returned fd for as long as it stays open: what tells cleaners the daemon
 * lives. Null when it cannot be made.
 *
 * @example
 * ```ts
 * const fd = makeLockedRingDir("/dev/shm/stompwatch.4242.81234.1a2b3c4d");
 * ```
 */
export function makeLockedRingDir(path: string): number | null {
  const fd = daemonLibrary().stompwatch_ring_dir_make(cPath(path));
  return fd >= 0 ? fd : null;
}

/**
 * Closes an fd from makeLockedRingDir, releasing its lock.
 *
 * @example
 * ```ts
 * import { closeLock, makeLockedRingDir } from "./bindings.ts";
 * const fd = makeLockedRingDir("/dev/shm/stompwatch.example");
 * if (fd !== null) closeLock(fd);
 * ```
 */
export function closeLock(fd: number): void {
  callsOf(logSymbols).stompwatch_fd_close(fd);
}

/**
 * Removes the ring directory of a daemon that is gone: its `.lock` is not
 * held (or, without one, `pidGone`). False when it stays: its daemon lives,
 * or it is a symlink, or someone else's (never followed, never touched).
 *
 * @example
 * ```ts
 * reapRingDir("/dev/shm/stompwatch.4242.81234.1a2b3c4d", true); // true
 * ```
 */
export function reapRingDir(dir: string, pidGone: boolean): boolean {
  return daemonLibrary().stompwatch_ring_dir_reap(
    cPath(dir),
    pidGone ? 1 : 0,
  ) ===
    0;
}

/** Whether process `pid` exists. */
export function pidAlive(pid: number): boolean {
  return daemonLibrary().stompwatch_pid_alive(pid) !== 0;
}

/** Names in `dir` that start with `prefix` (in /dev/shm too); null when it cannot be read. */
export function listNames(dir: string, prefix: string): string[] | null {
  const out = new Uint8Array(1 << 16);
  const n = Number(
    daemonLibrary().stompwatch_dir_names(
      cPath(dir),
      cPath(prefix),
      out,
      BigInt(out.length),
    ),
  );
  if (n < 0) return null;
  return new TextDecoder().decode(out.subarray(0, n)).split("\n").filter(
    Boolean,
  );
}

/** When process `pid` started (clock ticks since boot); 0 when there is none. */
export function pidStarted(pid: number): bigint {
  return BigInt(daemonLibrary().stompwatch_pid_started(pid));
}

/** Why {@link openLogFile} refused a path. */
export class LogOpenError extends Error {
  constructor(
    /** `ENOENT`-style name where the system said why, else what it is. */
    readonly code: "ENOENT" | "EACCES" | "NOT_FILE" | "SYSTEM_FILE" | "OTHER",
    message: string,
  ) {
    super(message);
  }
}

const ERRNO_NAMES: Record<number, LogOpenError["code"]> = {
  2: "ENOENT",
  1: "EACCES",
  13: "EACCES",
};

function systemText(errno: number): string {
  const out = new Uint8Array(256);
  const n = callsOf(logSymbols).stompwatch_strerror(errno, out, out.length);
  const text = new TextDecoder().decode(out.subarray(0, n));
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/**
 * Opens a file to read without ever waiting for a writer (a FIFO), refusing
 * what is not a regular file or is one of the kernel's (/proc, /sys); the fd
 * is read with {@link readLogAt}. Throws {@link LogOpenError}.
 *
 * @example
 * ```ts
 * const fd = await openLogFile("memscope_dump.csv");
 * ```
 */
export async function openLogFile(path: string): Promise<number> {
  // C would read the path only up to its first NUL: another file.
  if (path.includes("\0")) throw new LogOpenError("ENOENT", "no such file");
  const fd = await callsOf(logSymbols).stompwatch_log_open(cPath(path));
  if (fd >= 0) return fd;
  if (fd === -100000) throw new LogOpenError("NOT_FILE", "not a file");
  if (fd === -100001) throw new LogOpenError("SYSTEM_FILE", "a system file");
  throw new LogOpenError(ERRNO_NAMES[-fd] ?? "OTHER", systemText(-fd));
}

/** Reads up to this size are made on the event loop, where allowed. */
const SMALL_READ = 256 << 10;
let smallReadsOnLoop = false;

/**
 * Lets small reads of logs (a leak's row read back) block the event loop,
 * which costs less than sending each to a thread: for a command line, which
 * serves no one else meanwhile. The daemon never calls this, so a slow
 * filesystem cannot stall it.
 *
 * @example
 * ```ts
 * readSmallLogPiecesOnLoop();
 * ```
 */
export function readSmallLogPiecesOnLoop(): void {
  smallReadsOnLoop = true;
}

/**
 * Reads into `into` at `offset` of an fd from {@link openLogFile}, off the
 * event loop; the count read (0 at the end). Throws an Error with the
 * system's reason.
 *
 * @example
 * ```ts
 * import { openLogFile, readLogAt } from "./bindings.ts";
 * const fd = await openLogFile("memscope_dump.csv");
 * const got = await readLogAt(fd, new Uint8Array(4096), 0);
 * ```
 */
export async function readLogAt(
  fd: number,
  into: Uint8Array,
  offset: number,
): Promise<number> {
  const lib = callsOf(logSymbols);
  const len = BigInt(into.length), at = BigInt(offset);
  // A read of the page cache costs less than handing it to a thread.
  const n = Number(
    smallReadsOnLoop && into.length <= SMALL_READ
      ? lib.stompwatch_log_pread_now(fd, into, len, at)
      : await lib.stompwatch_log_pread(fd, into, len, at),
  );
  if (n < 0) throw new Error(systemText(-n));
  return n;
}

/**
 * Closes an fd from {@link openLogFile}.
 *
 * @example
 * ```ts
 * import { closeLogFile, openLogFile } from "./bindings.ts";
 * closeLogFile(await openLogFile("memscope_dump.csv"));
 * ```
 */
export function closeLogFile(fd: number): void {
  callsOf(logSymbols).stompwatch_fd_close(fd);
}

/**
 * The size of an fd's file now; throws with the system's reason.
 *
 * @example
 * ```ts
 * import { logSize, openLogFile } from "./bindings.ts";
 * console.log(logSize(await openLogFile("memscope_dump.csv")));
 * ```
 */
export function logSize(fd: number): number {
  const n = Number(callsOf(logSymbols).stompwatch_log_size(fd));
  if (n < 0) throw new Error(systemText(-n));
  return n;
}

/** What {@link leakScan} reads and where it puts what it keeps. */
export interface LeakScanInput {
  fd: number;
  /** Header positions of ID, Event, Event Type, Name, Device Id, Ptr, Attr. */
  columns: readonly number[];
  /** Byte offset and line number of the first data row. */
  offset: number;
  line: number;
  /** Arrays of check_leaks' kept rows (`LeakRows`), all of one length. */
  rows: {
    kind: Uint8Array;
    device: Uint32Array;
    id: Float64Array;
    ptr: Float64Array;
    size: Float64Array;
    offset: Float64Array;
    line: Uint32Array;
  };
  /** The TypeScript pass's row budget. */
  budget: number;
  markDevice: Uint32Array;
  markId: Float64Array;
  /** ASCII, as the log spells it. */
  eventType: string;
  /** As the log spells it; ASCII where it holds a quote. */
  mstxInfo: string;
  /**
   * A pass after the first: the first pass's devices, in order (they keep
   * their indices), each one's window as A, B, C (NaN: none), its
   * disorder and whether its IDs came once as the first pass's `spans` give
   * them (NaN: not known; 1: once), in
   * `perDevice` (LEAK_WINDOW_VALUES values a device), and where the first
   * pass's rows ended; only memory rows inside a window are kept, and no
   * row from `end` on.
   */
  windows?: {
    devices: readonly string[];
    perDevice: Float64Array;
    end: number;
    /**
     * Replay the windows as the rows are read (leak_stream.c): the rows
     * kept are then the leaks; `fallback` where the replay cannot go on.
     */
    stream?: boolean;
    /**
     * A streaming pass that reads on from where a first pass stopped
     * keeping rows (`offset` and `line` its `resume`): the first `rows`
     * rows of the arrays are that pass's, replayed before it reads.
     */
    resumeRows?: number;
    /**
     * A streaming pass that replays only the blocks of part `part` of
     * `parts` (by device and Ptr), for windows with more blocks pending at
     * once than one replay has room for; it reads from the start.
     */
    part?: { part: number; parts: number };
    /**
     * A streaming pass that, at its room, splits its part in two (it keeps
     * the blocks of the first half) while there are at most this many
     * parts: `streamParts` says how many there were at its end.
     */
    splitUpTo?: number;
    /**
     * A streaming pass given `freed` as a first pass filled it: of the
     * leaks at Ptrs no FREE names, only those among the first `maxListed`
     * (by device and ID) are kept as rows, the others counted in
     * `unlisted`.
     */
    maxListed?: number;
  };
  /**
   * The Ptrs freed (leak_freed.h), LEAK_FREED_BYTES long: a first pass
   * that stops keeping rows fills it, and a streaming pass given it holds
   * no block at a Ptr it does not have (only counts it). Of the MALLOCs
   * past the rows kept, counted there too, a streaming pass that reads on
   * from those rows counts down the ones it reads.
   */
  freed?: Uint8Array;
  /**
   * Where a pass that splits the log between two threads puts the second
   * half's rows in the arrays (the first half's go below it): `LeakRows`
   * halfAt. A pass that does not split keeps up to this many rows.
   */
  halfAt?: number;
  /**
   * A first pass: the mark that opens each window (check_leaks'
   * start_index). Memory rows past what the marks seen so far allow are
   * then dropped as they are read (leak_scan.c struct bounds).
   */
  startIndex?: number;
}

/** What {@link leakScan} found; `fallback`: run the TypeScript pass. */
export interface LeakScanResult {
  fallback: boolean;
  rowsKept: number;
  /** Rows were dropped at the budget. */
  overflow: boolean;
  marks: number;
  dataRows: number;
  bytes: number;
  /** Device Ids in order of first appearance, as written. */
  devices: string[];
  /**
   * MALLOC rows kept whose ID is not written as String(ID) gives it: none,
   * and every kept row's Ptr and ID can be printed from the arrays.
   */
  oddIds: number;
  /** 2 when a second thread read the second half of the rows, else 1. */
  halves: number;
  /**
   * Each device's memory rows of the event type, kept or not, their
   * smallest and largest ID, and how far its MALLOC rows come behind the
   * largest MALLOC ID before them in the file (its disorder, which a
   * streaming pass is given back), and 1 where the file's MALLOC IDs each
   * came once (ids_seen.h), else 0: LEAK_SPAN_VALUES values a device, by
   * index (a streaming pass leaves them empty).
   */
  spans: Float64Array;
  /**
   * The marks passed the room `markId` has, which alone made the pass fall
   * back: more room, and it can run again.
   */
  marksFull: boolean;
  /**
   * The memory rows kept passed the room `rows` has, below the budget,
   * which alone made the pass fall back: more room, and it can run again.
   */
  rowsFull: boolean;
  /**
   * With `overflow`: where the rows kept end, a prefix of the file's (every
   * row before `offset` a window may hold is kept, none from there on);
   * undefined when they are no such prefix.
   */
  resume?: { offset: number; line: number };
  /** Where the rows kept begin in the arrays. */
  firstRow: number;
  /**
   * A streaming pass fell back at its room (or memory was short for it)
   * where more parts would each hold fewer blocks: not where one Ptr alone
   * holds half the room.
   */
  streamFull: boolean;
  /**
   * A streaming pass's parts at its end (1: the blocks of every part): it
   * replayed part `part` of these, however many it was given.
   */
  streamParts: number;
  /**
   * A streaming pass's leaks that are not among the rows kept (past
   * `maxListed`), by device index: how many, and their bytes, exact.
   */
  unlisted: Array<{ count: number; bytes: bigint }>;
}

/**
 * leak_freed.h SW_LEAK_FREED_BYTES: a state word and one unused, 2^19
 * groups of two words, then 2^22 bytes of the MALLOCs to come.
 */
export const LEAK_FREED_BYTES = 8 * (2 + 2 * 2 ** 19) + 2 ** 22;

const LEAK_DEVICE_BYTES = 64;
/** leak_scan.c's offset of the device names, and the size of its arguments. */
const LEAK_NAMES_AT = 256;
/** leak_stream.h SW_LEAK_MAX_DEVICES: room for names, and for spans. */
const LEAK_MAX_DEVICES = 256;
/**
 * leak_scan.c SPAN_VALUES: a device's rows, smallest and largest ID,
 * disorder, IDs once.
 */
export const LEAK_SPAN_VALUES = 5;
/** leak_scan.c WINDOW_VALUES: a device's A, B, C, disorder and IDs once. */
export const LEAK_WINDOW_VALUES = 5;
/** leak_scan.c's offset of `stream`, after the names. */
const LEAK_STREAM_AT = LEAK_NAMES_AT + LEAK_MAX_DEVICES * LEAK_DEVICE_BYTES;
/**
 * leak_scan.c's offsets of `resume_offset`, `resume_line`, `too_long_line`,
 * `resume_rows`, then `half_at` and `first_row`.
 */
const LEAK_RESUME_AT = LEAK_STREAM_AT + 8;
const LEAK_HALF_AT = LEAK_RESUME_AT + 24;
/**
 * leak_scan.c's offsets of `stream_part`, `stream_parts`, `stream_full`,
 * `stream_split`.
 */
const LEAK_PART_AT = LEAK_HALF_AT + 16;
/** leak_scan.c's offsets of `freed_bytes` and `max_listed`, then two pointers. */
const LEAK_FREED_AT = LEAK_PART_AT + 16;
const LEAK_ARGS_SIZE = LEAK_FREED_AT + 32;

/** csv_frame.h SW_SCAN_CUT: the log got shorter while a pass read it. */
const SCAN_CUT = 2;

/** Why a log could not be read whole: it was cut while it was read. */
export const LOG_CUT_REASON =
  "it got shorter while it was read (cut by whoever writes it); run again once the log is complete";

/**
 * csv_frame.h SW_SCAN_TOO_LONG: a row runs on further than the TypeScript
 * reader takes (ffi/reading/ts_row_room.h), which refuses the log.
 */
const SCAN_TOO_LONG = 3;

/**
 * A native pass met a row that the TypeScript reader refuses as running on
 * too long, on line `line`: the caller words it as that reader does.
 */
export class RowRunsOnError extends Error {
  override name = "RowRunsOnError";
  constructor(readonly line: number) {
    super(`the row at line ${line} runs on too long`);
  }
}

/** Whether a native pass's status is a failure {@link scanFailure} words. */
function scanFailed(status: number): boolean {
  return status < 0 || status === SCAN_CUT || status === SCAN_TOO_LONG;
}

/**
 * The error of a native pass that failed: SCAN_CUT, SCAN_TOO_LONG (the row
 * on line `line`), or -errno.
 */
function scanFailure(status: number, line = 0): Error {
  if (status === SCAN_TOO_LONG) return new RowRunsOnError(line);
  return new Error(status === SCAN_CUT ? LOG_CUT_REASON : systemText(-status));
}

/**
 * check_leaks' first pass in native code (ffi/daemon/leak_scan.c), off the
 * event loop. Throws an Error with the system's reason when a read fails.
 *
 * @example
 * ```ts ignore
 * const found = await leakScan(input);
 * if (found.fallback) console.log("run the TypeScript pass");
 * ```
 */
export async function leakScan(input: LeakScanInput): Promise<LeakScanResult> {
  const args = new Uint8Array(LEAK_ARGS_SIZE);
  const v = new DataView(args.buffer);
  const text = encoder.encode(input.eventType);
  const mstx = encoder.encode(input.mstxInfo);
  const r = input.rows;
  v.setInt32(0, input.fd, true);
  input.columns.forEach((c, k) => v.setInt32(4 + 4 * k, c, true));
  v.setUint32(32, input.line, true);
  v.setBigUint64(40, BigInt(input.offset), true);
  v.setBigUint64(104, BigInt(r.id.length), true);
  v.setBigUint64(112, BigInt(Math.min(input.budget, 2 ** 62)), true);
  v.setBigUint64(136, BigInt(input.markId.length), true);
  v.setUint32(152, text.length, true);
  v.setUint32(168, mstx.length, true);
  v.setUint32(172, input.mstxInfo.includes('"') ? 1 : 0, true);
  v.setBigUint64(LEAK_HALF_AT, BigInt(input.halfAt ?? 0), true);
  // leak_scan.c says how many marks it keeps bounds for (MAX_BOUND_MARKS):
  // past that it keeps every row. Saturated, never wrapped to a small one.
  if (input.startIndex !== undefined) {
    v.setUint32(220, Math.min(input.startIndex + 3, 2 ** 32 - 1), true);
  }
  const windows = input.windows;
  if (
    windows &&
    windows.perDevice.length < LEAK_WINDOW_VALUES * windows.devices.length
  ) {
    throw new RangeError("leakScan: a window's values for every device");
  }
  if (windows) {
    v.setUint32(212, windows.devices.length, true);
    v.setUint32(216, windows.devices.length, true);
    v.setBigUint64(232, BigInt(windows.end), true);
    v.setUint32(LEAK_STREAM_AT, windows.stream ? 1 : 0, true);
    v.setBigUint64(LEAK_RESUME_AT + 16, BigInt(windows.resumeRows ?? 0), true);
    v.setUint32(LEAK_PART_AT, windows.part?.part ?? 0, true);
    v.setUint32(LEAK_PART_AT + 4, windows.part?.parts ?? 0, true);
    v.setUint32(LEAK_PART_AT + 12, windows.splitUpTo ?? 0, true);
    v.setBigUint64(
      LEAK_FREED_AT + 8,
      BigInt(Math.min(windows.maxListed ?? 0, 2 ** 62)),
      true,
    );
    windows.devices.forEach((d, k) =>
      args.set(encoder.encode(d), LEAK_NAMES_AT + k * LEAK_DEVICE_BYTES)
    );
  }
  // Empty texts still need memory the C side may read zero bytes from.
  const some = (b: Uint8Array) => b.length ? b : new Uint8Array(1);
  const spans = new Float64Array(LEAK_SPAN_VALUES * LEAK_MAX_DEVICES);
  const freed = input.freed ?? new Uint8Array(8);
  v.setBigUint64(LEAK_FREED_AT, BigInt(freed.length), true);
  const unlisted = new BigUint64Array(3 * LEAK_MAX_DEVICES);
  const status = await callsOf(leakSymbols).stompwatch_leak_scan(
    args,
    r.kind,
    r.device,
    r.id,
    r.ptr,
    r.size,
    r.offset,
    r.line,
    input.markDevice,
    input.markId,
    some(text),
    some(mstx),
    windows?.perDevice ?? new Float64Array(1),
    spans,
    freed,
    unlisted,
  );
  if (scanFailed(status)) {
    throw scanFailure(status, v.getUint32(LEAK_RESUME_AT + 12, true));
  }
  const count = v.getUint32(212, true);
  const devices: string[] = [];
  for (let k = 0; k < count; k++) {
    const at = LEAK_NAMES_AT + k * LEAK_DEVICE_BYTES;
    const end = args.indexOf(0, at);
    devices.push(
      new TextDecoder().decode(
        args.subarray(
          at,
          end < 0 || end > at + LEAK_DEVICE_BYTES
            ? at + LEAK_DEVICE_BYTES
            : end,
        ),
      ),
    );
  }
  return {
    fallback: status === 1,
    rowsKept: Number(v.getBigUint64(176, true)),
    overflow: v.getUint32(208, true) !== 0,
    marks: Number(v.getBigUint64(184, true)),
    dataRows: Number(v.getBigUint64(192, true)),
    bytes: Number(v.getBigUint64(200, true)),
    devices,
    oddIds: Number(v.getBigUint64(240, true)),
    halves: Number(v.getBigUint64(248, true)),
    spans: spans.subarray(0, LEAK_SPAN_VALUES * count),
    marksFull: (v.getUint32(LEAK_STREAM_AT + 4, true) & 1) !== 0,
    rowsFull: (v.getUint32(LEAK_STREAM_AT + 4, true) & 2) !== 0,
    resume: resumeOf(v),
    firstRow: Number(v.getBigUint64(LEAK_HALF_AT + 8, true)),
    streamFull: v.getUint32(LEAK_PART_AT + 8, true) !== 0,
    streamParts: Math.max(1, v.getUint32(LEAK_PART_AT + 4, true)),
    unlisted: Array.from({ length: count }, (_, k) => ({
      count: Number(unlisted[3 * k]),
      bytes: unlisted[3 * k + 1] + (unlisted[3 * k + 2] << 64n),
    })),
  };
}

/** leak_scan.c's `resume_offset` and `resume_line`, where it gives one. */
function resumeOf(v: DataView): LeakScanResult["resume"] {
  const offset = Number(v.getBigUint64(LEAK_RESUME_AT, true));
  return offset
    ? { offset, line: v.getUint32(LEAK_RESUME_AT + 8, true) }
    : undefined;
}

/** rows_at.c's answers beside SCAN_CUT and -errno. */
const ROWS = { DONE: 0, UNMAPPED: 1, FULL: 3, TOO_LONG: 4 } as const;

/** What {@link rowsAt} copied: row k is bytes[ends[k-1], ends[k]) of its batch. */
export type RowsAtResult =
  | { batches: Array<{ bytes: Uint8Array; ends: Uint32Array }> }
  | { tooLong: number }
  | { unmapped: true };

/**
 * The bytes of the rows of the log open on `fd` that start at `offsets`
 * (ascending), each through the end of its first row that is not empty
 * (ffi/daemon/rows_at.c), in one call off the event loop per batch of 1 MiB
 * or one row. `{ tooLong: k }`: the row at offsets[k] runs on further than
 * the TypeScript reader takes (ffi/reading/ts_row_room.h); `{ unmapped }`:
 * the file cannot be mapped (read it yourself). The file is taken to end at
 * `end` where it is longer (0: where it ends); an offset at or past its end
 * copies nothing. Throws an Error with the reason when the file is cut
 * while it is read or a read fails.
 *
 * @example
 * ```ts ignore
 * const r = await rowsAt(fd, Float64Array.of(120, 4096));
 * ```
 */
export async function rowsAt(
  fd: number,
  offsets: Float64Array,
  end = 0,
): Promise<RowsAtResult> {
  const args = new Uint8Array(56);
  const v = new DataView(args.buffer);
  v.setInt32(0, fd, true);
  v.setBigUint64(8, BigInt(offsets.length), true);
  v.setBigUint64(48, BigInt(end), true);
  const batches: Array<{ bytes: Uint8Array; ends: Uint32Array }> = [];
  let room = 1 << 20;
  for (;;) {
    const first = Number(v.getBigUint64(16, true));
    const bytes = new Uint8Array(room);
    // Rows of a batch: a thousand or so fill 1 MiB; the rest wait.
    const ends = new Uint32Array(Math.min(offsets.length - first, 8192));
    v.setBigUint64(24, BigInt(room), true);
    v.setBigUint64(32, 0n, true);
    v.setBigUint64(40, BigInt(ends.length), true);
    const status = await callsOf(leakSymbols).stompwatch_rows_at(
      args,
      offsets,
      bytes,
      ends,
    );
    const done = Number(v.getBigUint64(16, true));
    if (done > first) {
      batches.push({ bytes, ends: ends.subarray(0, done - first) });
    }
    if (status === ROWS.DONE) return { batches };
    if (status === ROWS.UNMAPPED) return { unmapped: true };
    if (status === ROWS.TOO_LONG) return { tooLong: done };
    if (status !== ROWS.FULL) throw scanFailure(status);
    room = Math.max(1 << 20, Number(v.getBigUint64(32, true)));
  }
}

/** One device's window for {@link leakReplayWindows}: IDs of its marks A, B, C. */
export interface LeakReplayWindow {
  device: number;
  a: number;
  b: number;
  c: number;
}

/**
 * What the replay of a window found: the indices of the blocks left
 * pending, by ID; or, as `{ noSize }`, the first MALLOC row of the window
 * without a size; or that memory ran out. Answers, not errors, so that the
 * caller meets several windows' in their order.
 */
export type LeakReplayed =
  | Uint32Array
  | { noSize: number }
  | { outOfMemory: true };

/**
 * check_leaks' replay of each device's window (ffi/daemon/leak_replay.c)
 * over the first `count` kept rows, in one call (each device's rows listed
 * natively where several have a window, the windows replayed on two
 * threads): what each found, in the order of `windows`. A device may have
 * one window.
 *
 * @example
 * ```ts ignore
 * const [first, second] = await leakReplayWindows(rows, rows.length, [
 *   { device: 0, a: 1, b: 5, c: 9 },
 *   { device: 1, a: 2, b: 6, c: 8 },
 * ]);
 * ```
 */
export async function leakReplayWindows(
  rows: Pick<LeakScanInput["rows"], "kind" | "device" | "id" | "ptr" | "size">,
  count: number,
  windows: LeakReplayWindow[],
): Promise<LeakReplayed[]> {
  // A, B, C by device index, NaN where a device has no window.
  const devices = Math.max(0, ...windows.map((w) => w.device + 1));
  const table = new Float64Array(3 * devices).fill(NaN);
  for (const { device, a, b, c } of windows) {
    if (table[3 * device] === table[3 * device]) {
      throw new RangeError(`device ${device}'s window given twice`);
    }
    table.set([a, b, c], 3 * device);
  }
  const out = new Uint32Array(Math.max(1, count));
  const found = new Float64Array(2 * Math.max(1, devices));
  const status = await callsOf(leakSymbols).stompwatch_leak_replay_windows(
    rows.kind,
    rows.device,
    rows.id,
    rows.ptr,
    rows.size,
    count,
    table,
    devices,
    out,
    found,
  );
  if (status !== 0) throw new Error("Cannot check leaks: out of memory");
  return windows.map(({ device }): LeakReplayed => {
    const from = found[2 * device], n = found[2 * device + 1];
    if (n === -1) return { outOfMemory: true };
    if (n < -1) return { noSize: -2 - n };
    return out.subarray(from, from + n);
  });
}

/** sw_snapshot_convert's parameters, the same for both ways of calling it. */
const SNAPSHOT_CONVERT_PARAMETERS = [
  "buffer", // inputs: NUL-terminated paths, then an empty one
  "buffer", // labels, the same way
  "buffer", // a byte per input: 0 leaves out its host rows
  "buffer", // output path (an existing file)
  "i32", // JSON?
  "f64", // device, -1 for all
  "f64", // pid, -1 for all
  "f64", // max entries, -1 for all
  "f64", // until (ns), NaN for no limit
  "i32", // 1: history, 2: refuse a pid without rows
  "buffer", // summary: 10 f64
  "buffer", // message
  "i32", // message room
] as const;

const analysisSymbols = {
  sw_snapshot_convert: {
    parameters: SNAPSHOT_CONVERT_PARAMETERS,
    result: "i32",
  },
  /** The same on a thread of Deno's, for the daemon's event loop. */
  sw_snapshot_convert_async: {
    name: "sw_snapshot_convert",
    parameters: SNAPSHOT_CONVERT_PARAMETERS,
    result: "i32",
    nonblocking: true,
  },
} as const;

type AnalysisLib = Deno.DynamicLibrary<typeof analysisSymbols>["symbols"];
let analysisLib: AnalysisLib | undefined;

function analysisLibrary(): AnalysisLib {
  if (analysisLib) return analysisLib;
  try {
    analysisLib = Deno.dlopen(ANALYSIS_LIBRARY, analysisSymbols).symbols;
  } catch (e) {
    throw new Error(
      `Cannot load the native library: ${ANALYSIS_LIBRARY} (${
        (e as Error).message.split("\n")[0]
      }); run make -C ffi or start through ./stompwatch`,
    );
  }
  return analysisLib;
}

/**
 * Whether this process may open the converter: Deno would otherwise ask
 * (or refuse) in its own words, which are no advice for a stompwatch user.
 * `./stompwatch snapshot` grants it; a bare `deno run main.ts` may not, and
 * then the TypeScript converter does the same work, slower.
 *
 * @example
 * ```ts
 * if (nativeSnapshotAllowed()) console.log("native converter");
 * ```
 */
export function nativeSnapshotAllowed(): boolean {
  return Deno.permissions.querySync({ name: "ffi", path: ANALYSIS_LIBRARY })
    .state === "granted";
}

/** What {@link convertSnapshotNative} is asked to do. */
export interface NativeSnapshotRequest {
  /** Event logs, read in this order (several files of one process add up). */
  inputs: string[];
  /** Each input's name in messages; default the paths. */
  labels?: string[];
  /**
   * Per input, whether its host rows (cpu/host) are read: false for a log
   * whose host rows are copies of another's. Default all true.
   */
  hostRows?: boolean[];
  /** An existing file, truncated and filled. */
  output: string;
  format: "pickle" | "json";
  device?: number;
  pid?: number;
  maxEntries?: number;
  /** Leave out rows stamped later (nanoseconds, as the log writes them). */
  untilNs?: number;
  /** false: the end state only; default true. */
  history?: boolean;
  /** Whether a `pid` without memory rows is refused (the CLI's rule). */
  refuseEmptyPid?: boolean;
}

/** The counts a conversion reports (analysis/snapshot's SnapshotSummary). */
export interface NativeSnapshotSummary {
  entries: number;
  dropped: number;
  segments: number;
  devices: number;
  cpuDevice: number | undefined;
  freedBeforeLog: number;
  overlapped: number;
  skipped: number;
  /** Bytes of the logs read. */
  bytes: number;
}

/** A conversion's outcome: the summary, or why it was refused. */
export type NativeSnapshotResult =
  | { ok: true; summary: NativeSnapshotSummary; bytes: number }
  | { ok: false; kind: "csv" | "range" | "io"; message: string };

const KINDS = { 1: "csv", 2: "range", 3: "io" } as const;

function nulList(items: string[]): Uint8Array<ArrayBuffer> {
  return encoder.encode(items.map((s) => `${s}\0`).join("") + "\0");
}

function nativeArgs(req: NativeSnapshotRequest) {
  const summary = new Float64Array(10);
  const message = new Uint8Array(8192);
  // In the order of SNAPSHOT_CONVERT_PARAMETERS.
  const call = [
    nulList(req.inputs),
    nulList(req.labels ?? req.inputs),
    Uint8Array.from(
      req.inputs.map((_, k) => req.hostRows?.[k] === false ? 0 : 1),
    ),
    encoder.encode(`${req.output}\0`),
    req.format === "json" ? 1 : 0,
    req.device ?? -1,
    req.pid ?? -1,
    req.maxEntries ?? -1,
    req.untilNs ?? NaN,
    (req.history === false ? 0 : 1) | (req.refuseEmptyPid ? 2 : 0),
    summary,
    message,
    message.length,
  ] as const;
  return { summary, message, call };
}

function nativeResult(
  code: number,
  a: ReturnType<typeof nativeArgs>,
): NativeSnapshotResult {
  if (code !== 0) {
    const end = a.message.indexOf(0);
    return {
      ok: false,
      kind: KINDS[code as 1 | 2 | 3] ?? "io",
      message: new TextDecoder().decode(
        a.message.subarray(0, end < 0 ? 0 : end),
      ),
    };
  }
  const s = a.summary;
  return {
    ok: true,
    summary: {
      entries: s[0],
      dropped: s[1],
      segments: s[2],
      devices: s[3],
      cpuDevice: s[4] < 0 ? undefined : s[4],
      freedBeforeLog: s[5],
      overlapped: s[6],
      skipped: s[7],
      bytes: s[8],
    },
    bytes: s[9],
  };
}

/**
 * Converts event logs into a memory_viz snapshot in native code
 * (`sw_snapshot_convert`), with the rules of analysis/snapshot/. Blocks
 * until the file is written.
 *
 * @example
 * ```ts
 * const r = convertSnapshotNative({
 *   inputs: ["memscope_dump.csv"],
 *   output: "snap.pickle",
 *   format: "pickle",
 * });
 * if (r.ok) console.log(r.summary.entries);
 * ```
 */
export function convertSnapshotNative(
  req: NativeSnapshotRequest,
): NativeSnapshotResult {
  const a = nativeArgs(req);
  const code = analysisLibrary().sw_snapshot_convert(...a.call);
  return nativeResult(code, a);
}

/**
 * {@link convertSnapshotNative} on a thread of Deno's: the daemon's event
 * loop goes on meanwhile.
 *
 * @example
 * ```ts
 * const r = await convertSnapshotNativeAsync({
 *   inputs: ["memscope_dump.csv"],
 *   output: "snap.pickle",
 *   format: "pickle",
 * });
 * ```
 */
export async function convertSnapshotNativeAsync(
  req: NativeSnapshotRequest,
): Promise<NativeSnapshotResult> {
  const a = nativeArgs(req);
  const code = await analysisLibrary().sw_snapshot_convert_async(...a.call);
  return nativeResult(code, a);
}

/** One log for {@link compareRead}, its header read and checked already. */
export interface CompareLogInput {
  fd: number;
  /** Header positions of ID, Event, Event Type, Name, Timestamp, Device Id, Attr. */
  columns: readonly number[];
  /** Byte offset and line number of the first data row. */
  offset: number;
  line: number;
}

/** What one log holds, as `StepLog` counts it; frameworks: 1 PTA, 2 MINDSPORE. */
export interface CompareLogCounts {
  aligned: number;
  deviceRows: number;
  frameworks: number;
}

/** The comparison's rows in native code's words (see ffi/daemon/compare.c). */
export interface NativeComparisonRows {
  device: Float64Array;
  /** NaN where the row is missing from that side. */
  base: Float64Array;
  compare: Float64Array;
  /** Indexes into `texts`. */
  name: Int32Array;
  event: Int32Array;
  texts: string[];
}

const COMPARE_ARGS_SIZE = 176;

/**
 * Both logs read natively (ffi/daemon/compare.c), held until disposed;
 * `diff` compares them.
 */
export class NativeComparison {
  #args: Uint8Array;
  #longest = 0;
  readonly counts: [CompareLogCounts, CompareLogCounts];

  /** Internal: {@link compareRead} makes these. */
  constructor(args: Uint8Array) {
    this.#args = args;
    const v = new DataView(args.buffer);
    const counts = (s: number) => ({
      aligned: Number(v.getBigUint64(96 + 8 * s, true)),
      deviceRows: Number(v.getBigUint64(112 + 8 * s, true)),
      frameworks: v.getUint32(128 + 4 * s, true),
    });
    this.counts = [counts(0), counts(1)];
  }

  /**
   * The rows, devices ascending, ops taking memory from `framework` (0:
   * none); undefined where the TypeScript comparison must run instead.
   * Their CSV lines come from {@linkcode lines} after.
   */
  async diff(
    framework: number,
    traceBudgetBytes: number,
  ): Promise<NativeComparisonRows | undefined> {
    const args = this.#args, v = new DataView(args.buffer);
    v.setUint32(136, framework, true);
    v.setFloat64(168, traceBudgetBytes, true);
    const status = await callsOf(compareSymbols).stompwatch_compare_diff(args);
    if (status < 0) throw new Error(systemText(-status));
    if (status === 1) return undefined;
    const rows = Number(v.getBigUint64(144, true));
    this.#longest = Number(v.getBigUint64(152, true));
    const out = {
      device: new Float64Array(Math.max(rows, 1)),
      base: new Float64Array(Math.max(rows, 1)),
      compare: new Float64Array(Math.max(rows, 1)),
      name: new Int32Array(Math.max(rows, 1)),
      event: new Int32Array(Math.max(rows, 1)),
    };
    const count = v.getUint32(140, true);
    const textBytes = new Uint8Array(Number(v.getBigUint64(160, true)) || 1);
    const textEnd = new Uint32Array(count || 1);
    callsOf(compareSymbols).stompwatch_compare_take(
      args,
      out.device,
      out.base,
      out.compare,
      out.name,
      out.event,
      textBytes,
      textEnd,
    );
    const decoder = new TextDecoder();
    const texts: string[] = [];
    for (let i = 0, from = 0; i < count; i++) {
      texts.push(decoder.decode(textBytes.subarray(from, textEnd[i])));
      from = textEnd[i];
    }
    const cut = <T extends Float64Array | Int32Array>(a: T) =>
      a.subarray(0, rows) as T;
    return {
      device: cut(out.device),
      base: cut(out.base),
      compare: cut(out.compare),
      name: cut(out.name),
      event: cut(out.event),
      texts,
    };
  }

  /**
   * The CSV lines of the rows {@linkcode diff} gave, a MiB or so at a
   * time, each chunk valid until the next is asked for: one buffer that
   * stays warm instead of the whole file's worth of fresh pages.
   */
  *lines(): Generator<Uint8Array> {
    const buffer = new Uint8Array(Math.max(1 << 20, this.#longest));
    for (;;) {
      const n = Number(
        callsOf(compareSymbols).stompwatch_compare_lines(
          this.#args,
          buffer,
          BigInt(buffer.length),
        ),
      );
      if (n === 0) return;
      yield buffer.subarray(0, n);
    }
  }

  /**
   * A comparison holding what this one held, which then holds nothing:
   * for a caller that keeps it past the `using` block that made it.
   */
  move(): NativeComparison {
    const moved = new NativeComparison(this.#args);
    moved.#longest = this.#longest;
    this.#args = new Uint8Array(COMPARE_ARGS_SIZE);
    return moved;
  }

  /** Frees what the native side holds. */
  [Symbol.dispose](): void {
    callsOf(compareSymbols).stompwatch_compare_free(this.#args);
  }
}

/**
 * Reads both logs' rows natively, off the event loop, at `levels` (1 op, 2
 * kernel, 3 both); undefined where the TypeScript reader must read them.
 * Throws an Error with the system's reason when a read fails.
 *
 * @example
 * ```ts ignore
 * using run = await compareRead([base, next], 1);
 * const out = await run?.diff(1, 64 << 20);
 * ```
 */
export async function compareRead(
  logs: readonly [CompareLogInput, CompareLogInput],
  levels: number,
): Promise<NativeComparison | undefined> {
  const args = new Uint8Array(COMPARE_ARGS_SIZE);
  const v = new DataView(args.buffer);
  logs.forEach((log, s) => {
    v.setInt32(4 * s, log.fd, true);
    log.columns.forEach((c, k) => v.setInt32(8 + 28 * s + 4 * k, c, true));
    v.setUint32(64 + 4 * s, log.line, true);
    v.setBigUint64(80 + 8 * s, BigInt(log.offset), true);
  });
  v.setUint32(72, levels, true);
  const status = await callsOf(compareSymbols).stompwatch_compare_read(args);
  if (scanFailed(status)) {
    const log = v.getUint32(76, true);
    throw new CompareReadError(
      scanFailure(status, v.getUint32(64 + 4 * log, true)),
      log,
    );
  }
  return status === 0 ? new NativeComparison(args) : undefined;
}

/**
 * One of {@link compareRead}'s logs could not be read: which, and why (the
 * cause: a {@link RowRunsOnError} or an Error with the reason).
 */
export class CompareReadError extends Error {
  override name = "CompareReadError";
  /** 0 for the base log, 1 for the other. */
  readonly log: number;
  constructor(cause: Error, log: number) {
    super(cause.message, { cause });
    this.log = log;
  }
}

/**
 * compare's edit script in native code (ffi/daemon/myers.c), for tests
 * that hold it to analysis/compare/myers_diff.ts (`traceBudgetBytes` and
 * `exactSteps` as its MyersOptions): each edit's kind (0 equal, 1 delete,
 * 2 insert) and indexes.
 *
 * @example
 * ```ts ignore
 * const { kind } = myersDiffNative(Int32Array.of(1, 2), Int32Array.of(2), 1 << 26, 1 << 27);
 * ```
 */
export function myersDiffNative(
  a: Int32Array,
  b: Int32Array,
  traceBudgetBytes: number,
  exactSteps: number,
): { kind: Uint8Array; a: Uint32Array; b: Uint32Array } {
  const room = Math.max(1, a.length + b.length);
  const kind = new Uint8Array(room);
  const ia = new Uint32Array(room), ib = new Uint32Array(room);
  const n = Number(
    callsOf(compareSymbols).stompwatch_myers_diff(
      a.length ? a : new Int32Array(1),
      a.length,
      b.length ? b : new Int32Array(1),
      b.length,
      traceBudgetBytes,
      exactSteps,
      kind,
      ia,
      ib,
    ),
  );
  if (n < 0) throw new Error("Cannot diff: out of memory");
  return {
    kind: kind.subarray(0, n),
    a: ia.subarray(0, n),
    b: ib.subarray(0, n),
  };
}
