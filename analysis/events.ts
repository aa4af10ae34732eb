/**
 * The events a traced process reports, as the rest of the daemon sees them
 * once they have left the ring. Addresses and sizes are plain numbers: device
 * and host addresses stay below 2^53.
 *
 * @module
 */

/**
 * Memory pools of allocations, as the event log's Event Type names them, in
 * the order of their codes: a pool's code is its index here. The ring's
 * `enum sw_pool` (ffi/include/stompwatch_ring.h, mirrored by `REC.POOL_*`
 * in ffi/bindings.ts) numbers them the same way, and a test holds the two
 * together; everything in TypeScript takes codes and names from here.
 */
export const POOLS = ["HAL", "HOST", "PTA"] as const;

/** Memory pool of an allocation. */
export type Pool = typeof POOLS[number];

/** The code of each pool: its index in {@linkcode POOLS}. */
export const POOL_CODE: Readonly<Record<Pool, number>> = Object.freeze(
  Object.fromEntries(POOLS.map((p, i) => [p, i])) as Record<Pool, number>,
);

/** Fields every event carries. */
export interface EventBase {
  pid: number;
  tid: number;
  /** Nanoseconds since the epoch. */
  ts: number;
  /** Device id, -1 for the host. */
  device: number;
}

/** One event from a traced process. */
export type TracedEvent =
  | EventBase & { kind: "proc_start"; command: string }
  | EventBase & { kind: "proc_exit" }
  | EventBase & {
    kind: "alloc";
    addr: number;
    size: number;
    pool: Pool;
    /** aclError; non-zero when the allocation failed. */
    result: number;
    /** Per process, from 1; 0 for a failed allocation. */
    allocationId: number;
    /** The framework op that created it (Python), for the row's Name. */
    op?: string;
    /** Owner tags joined with `@` (describer), for the row's Attr. */
    owner?: string;
    /** The Python call stack, for the row's `Call Stack(Python)`. */
    pythonStack?: string;
  }
  | EventBase & {
    kind: "free";
    addr: number;
    pool: Pool;
    result: number;
    /** Size and id of the block freed; 0 when the block was never seen. */
    size: number;
    allocationId: number;
  }
  | EventBase & {
    /** One op launch; `ts` is when it was launched. */
    kind: "op";
    name: string;
    /** aclError the launch returned. */
    result: number;
    /**
     * A framework (Aten) op's start or end, `OP_LAUNCH,ATEN_START/ATEN_END`
     * rows; absent for a runtime op launch.
     */
    framework?: "start" | "end";
    /** The Python call stack of a framework op, for `Call Stack(Python)`. */
    pythonStack?: string;
  }
  | EventBase & {
    /** A framework op's access to a tensor (ACCESS rows, `--events access`). */
    kind: "access";
    op: string;
    addr: number;
    size: number;
    access: "READ" | "WRITE" | "UNKNOWN";
    dtype: string;
    shape: string;
    pythonStack?: string;
  }
  | EventBase & { kind: "mark"; message: string }
  | EventBase & { kind: "range_start"; id: number; message: string }
  | EventBase & { kind: "range_end"; id: number };

/** An allocation event. */
export type AllocEvent = Extract<TracedEvent, { kind: "alloc" }>;
/** A free event. */
export type FreeEvent = Extract<TracedEvent, { kind: "free" }>;
/** An op launch. */
export type OpEvent = Extract<TracedEvent, { kind: "op" }>;

/**
 * Whether [addr, addr+length) overlaps any of the pairs.
 *
 * @example
 * ```ts
 * overlapsAny(0x100, 16, [[0x108, 4]]); // true
 * ```
 */
export function overlapsAny(
  addr: number,
  length: number,
  pairs: Array<[number, number]>,
): boolean {
  for (const [a, n] of pairs) {
    if (a < addr + length && addr < a + n) return true;
  }
  return false;
}
