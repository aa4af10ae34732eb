/**
 * The memory rows of an event log (MALLOC, FREE, OOM_DETAIL), read once and
 * kept in typed-array chunks (48 bytes a row) so that they can be replayed
 * in time order: msMemScope writes a MALLOC row when its block is freed, so
 * file order is not time order (SPEC section 2), and a file that holds
 * several processes has one ID counter per process, so IDs order rows only
 * within a process. Rows go by timestamp, then ID.
 *
 * @module
 */
import {
  type EventLogSource,
  MEM_DEVICE,
  MEM_ID,
  MEM_PID,
  MEM_PTR,
  MEM_SIZE,
  MEM_SLOTS,
  MEM_STACKS,
  MEM_TIME_US,
  type MemscopeRow,
  readMemscopeCsv,
} from "../memscope_csv/mod.ts";
import type { Frame } from "./emit.ts";

/** What a row does to the allocator state. */
export const enum Kind {
  SegmentAlloc = 0,
  SegmentFree = 1,
  BlockAlloc = 2,
  BlockFree = 3,
  Oom = 4,
}

/** Device codes besides device numbers. */
export const NO_DEVICE = -1;
export const CPU_DEVICE = -2;

/** Pools whose rows are runtime allocations (segments); the rest are blocks. */
export const RUNTIME_POOLS: ReadonlySet<string> = new Set([
  "HAL",
  "HOST",
  "HOST_PINNED",
]);

const SHIFT = 16;
const CHUNK = 1 << SHIFT;
const MASK = CHUNK - 1;

/** One column of numbers in chunks: grows without copying. */
class Column<T extends Float64Array | Int32Array> {
  chunks: T[] = [];
  constructor(readonly make: (n: number) => T) {}
  set(i: number, v: number): void {
    const c = i >>> SHIFT;
    if (c === this.chunks.length) this.chunks.push(this.make(CHUNK));
    this.chunks[c][i & MASK] = v;
  }
  get(i: number): number {
    return this.chunks[i >>> SHIFT][i & MASK];
  }
}

const f64 = (n: number) => new Float64Array(n);
const i32 = (n: number) => new Int32Array(n);

/**
 * The memory rows of a log, with the stacks they name interned.
 *
 * @example
 * ```ts
 * import { readMemoryRows } from "./rows.ts";
 * const rows = await readMemoryRows("memscope_dump.csv");
 * console.log(rows.count, rows.maxDevice);
 * ```
 */
export class MemoryRows {
  count = 0;
  readonly id = new Column(f64);
  readonly addr = new Column(f64);
  readonly size = new Column(f64);
  readonly timeUs = new Column(f64);
  /** Kind in the low 4 bits, device code (+2) above. */
  readonly meta = new Column(i32);
  readonly pid = new Column(i32);
  readonly stack = new Column(i32);
  /** Interned stacks; index 0 is the empty one. */
  readonly stacks: Frame[][] = [[]];
  /** `pid:device` pairs with block-level (allocator) rows. */
  readonly blockLevel = new Set<string>();
  /** Highest device number seen; -1 for none. */
  maxDevice = -1;
  hasCpu = false;
  /** Whether a row says `N/A` (or nothing) for its device. */
  hasNoDevice = false;
  sorted = true;
  /** Rows that could not be used: no address, size or known device. */
  skipped = 0;
  bytes = 0;
  #stackIds = new Map<string, number>();
  #lastT = -Infinity;
  #lastId = -Infinity;
  #lastBlockPid = NaN;
  #lastBlockDevice = NaN;

  kind(i: number): Kind {
    return this.meta.get(i) & 15;
  }
  device(i: number): number {
    return (this.meta.get(i) >> 4) - 2;
  }
  setDevice(i: number, device: number): void {
    this.meta.set(i, (this.meta.get(i) & 15) | ((device + 2) << 4));
  }

  /** Interns the stack written in a row's two stack columns. */
  stackOf(python: string, c: string): number {
    if (!python && !c) return 0;
    const key = `${python}\u0000${c}`;
    let id = this.#stackIds.get(key);
    if (id === undefined) {
      id = this.stacks.length;
      // PyTorch lists frames innermost first, as both columns are written
      // (msMemScope walks the Python frames from the current one out, and
      // so does our client): the C frames, then the Python ones.
      this.stacks.push([...parseFrames(c), ...parseFrames(python)]);
      this.#stackIds.set(key, id);
    }
    return id;
  }

  push(
    kind: Kind,
    row: MemscopeRow,
    addr: number,
    size: number,
  ): void {
    this.append(
      kind,
      deviceCode(row.device),
      row.id,
      timeUs(row.timestampUs),
      row.pid,
      addr,
      size,
      this.stackOf(
        row.column("Call Stack(Python)"),
        row.column("Call Stack(C)"),
      ),
    );
  }

  /** Adds one row given by its numbers (`device` a device code). */
  append(
    kind: Kind,
    device: number,
    id: number,
    t: number,
    pid: number,
    addr: number,
    size: number,
    stack: number,
  ): void {
    const i = this.count++;
    if (t < this.#lastT || (t === this.#lastT && id < this.#lastId)) {
      this.sorted = false;
    }
    this.#lastT = t;
    this.#lastId = id;
    const c = i >>> SHIFT, j = i & MASK;
    if (j === 0) {
      for (const col of [this.id, this.addr, this.size, this.timeUs]) {
        col.chunks.push(f64(CHUNK));
      }
      for (const col of [this.meta, this.pid, this.stack]) {
        col.chunks.push(i32(CHUNK));
      }
    }
    this.id.chunks[c][j] = id;
    this.addr.chunks[c][j] = addr;
    this.size.chunks[c][j] = size;
    this.timeUs.chunks[c][j] = t;
    if (device >= 0 && device > this.maxDevice) this.maxDevice = device;
    if (device === CPU_DEVICE) this.hasCpu = true;
    if (device === NO_DEVICE) this.hasNoDevice = true;
    this.meta.chunks[c][j] = kind | ((device + 2) << 4);
    this.pid.chunks[c][j] = pid;
    this.stack.chunks[c][j] = stack;
    if (
      (kind === Kind.BlockAlloc || kind === Kind.BlockFree) &&
      (pid !== this.#lastBlockPid || device !== this.#lastBlockDevice)
    ) {
      this.#lastBlockPid = pid;
      this.#lastBlockDevice = device;
      this.blockLevel.add(`${pid}:${device}`);
    }
  }

  /**
   * Row indices by timestamp, then ID, then file order: all rows, or those
   * of `list` (ascending), sorted in place.
   */
  order(list?: Uint32Array): Uint32Array {
    let perm = list;
    if (perm === undefined) {
      perm = new Uint32Array(this.count);
      for (let i = 0; i < perm.length; i++) perm[i] = i;
      if (this.sorted) return perm;
    }
    const n = perm.length;
    const ids = new Float64Array(n);
    const ts = new Float64Array(n);
    let sorted = true;
    for (let k = 0; k < n; k++) {
      const i = perm[k];
      ids[k] = this.id.get(i);
      ts[k] = this.timeUs.get(i);
      if (
        k > 0 &&
        (ts[k] < ts[k - 1] || (ts[k] === ts[k - 1] && ids[k] < ids[k - 1]))
      ) sorted = false;
    }
    if (sorted) return perm;
    // Sorted by position in `perm`, which is ascending file order.
    const at = byTimeThenId(ts, ids);
    const rows = perm.slice();
    for (let k = 0; k < n; k++) perm[k] = rows[at[k]];
    return perm;
  }
}

/**
 * Positions 0..n-1 ordered by `ts`, then `ids`, then position: a stable
 * radix sort on the timestamps (whole microseconds, at most 2^53), then
 * each run of equal timestamps (short: rows of one microsecond) by ID.
 */
function byTimeThenId(ts: Float64Array, ids: Float64Array): Uint32Array {
  const n = ts.length;
  let min = Infinity, max = -Infinity, rising = true;
  for (let k = 0; k < n; k++) {
    if (ts[k] < min) min = ts[k];
    if (ts[k] > max) max = ts[k];
    if (k > 0 && ts[k] < ts[k - 1]) rising = false;
  }
  // Often only IDs within one microsecond are out of order: no radix.
  if (rising) max = min;
  // t - min as two 32-bit halves (it is below 2^53, so exact).
  const lo = new Uint32Array(n), hi = new Uint32Array(n);
  for (let k = 0; k < n; k++) {
    const d = ts[k] - min;
    lo[k] = d >>> 0;
    hi[k] = Math.floor(d / 4294967296);
  }
  let a = new Uint32Array(n), b = new Uint32Array(n);
  for (let k = 0; k < n; k++) a[k] = k;
  const digit = new Uint16Array(n);
  const count = new Uint32Array(RADIX);
  const mask = RADIX - 1;
  // 11 bits at a time from the lowest; stable, so the last pass decides.
  for (let bit = 0; bit < 64 && 2 ** bit <= max - min; bit += 11) {
    for (let k = 0; k < n; k++) {
      digit[k] = bit + 11 <= 32
        ? (lo[k] >>> bit) & mask
        : bit >= 32
        ? (hi[k] >>> (bit - 32)) & mask
        : ((lo[k] >>> bit) | (hi[k] << (32 - bit))) & mask;
    }
    count.fill(0);
    for (let k = 0; k < n; k++) count[digit[k]]++;
    let sum = 0;
    for (let d = 0; d < RADIX; d++) {
      const c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (let k = 0; k < n; k++) {
      const p = a[k];
      b[count[digit[p]]++] = p;
    }
    [a, b] = [b, a];
  }
  for (let s = 0; s < n;) {
    let e = s + 1;
    while (e < n && ts[a[e]] === ts[a[s]]) e++;
    if (e - s > 1) sortRunById(a, s, e, ids);
    s = e;
  }
  return a;
}

const RADIX = 2048;

/** Sorts a[s..e) by `ids`, then by position, in place. */
function sortRunById(
  a: Uint32Array,
  s: number,
  e: number,
  ids: Float64Array,
): void {
  if (e - s > 32) {
    a.subarray(s, e).sort((x, y) => ids[x] - ids[y] || x - y);
    return;
  }
  for (let k = s + 1; k < e; k++) {
    const p = a[k];
    let j = k - 1;
    while (
      j >= s && (ids[a[j]] > ids[p] || (ids[a[j]] === ids[p] && a[j] > p))
    ) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = p;
  }
}

/**
 * Device Ids from 0 up to this are devices; one past it is read as N/A. No
 * machine numbers its devices so high, and each device up to the highest
 * named is a list of the snapshot: a log naming device 1,048,575 made
 * 1,048,576 of them (1.36 GB at 1M rows).
 */
const MAX_DEVICES = 1 << 16;

/** Device Id as a code: a number, {@link CPU_DEVICE} or {@link NO_DEVICE}. */
function deviceCode(text: string): number {
  if (text === "cpu" || text === "host") return CPU_DEVICE;
  const n = Number(text);
  return text !== "" && Number.isInteger(n) && n >= 0 && n < MAX_DEVICES
    ? n
    : NO_DEVICE;
}

/** A row's microseconds (`MemscopeRow.timestampUs`), 0 when unreadable. */
function timeUs(us: number): number {
  return Number.isSafeInteger(us) && us >= 0 ? us : 0;
}

/**
 * Frames of one stack column: one frame a line (or `;`-separated), as
 * `file(line): name`, `file:line name` or `name at file:line`; a frame in
 * no such shape keeps its text as the name.
 */
export function parseFrames(text: string): Frame[] {
  if (!text) return [];
  const frames: Frame[] = [];
  for (const raw of text.split(/\r?\n|;/)) {
    const s = raw.trim();
    if (!s) continue;
    const m = /^(.*?)\((\d+)\):?\s*(.*)$/.exec(s) ??
      /^(.*?):(\d+)\s+(.*)$/.exec(s);
    if (m) frames.push({ filename: m[1], line: Number(m[2]), name: m[3] });
    else {
      const at = /^(.*) at (.*?):(\d+)$/.exec(s);
      frames.push(
        at
          ? { filename: at[2], line: Number(at[3]), name: at[1] }
          : { filename: "", line: 0, name: s },
      );
    }
  }
  return frames;
}

/**
 * Reads the memory rows of an event log (a path, or a file opened with
 * `openEventLog`), of one process when `pid` is given, adding them to
 * `into` when given (several files of one process). Throws the reader's `MemscopeCsvError` for a file that is
 * not an event log.
 */
export async function readMemoryRows(
  source: EventLogSource,
  options: {
    pid?: number;
    into?: MemoryRows;
    /** Leave out rows stamped later (nanoseconds, as the log writes them). */
    untilNs?: number;
    /**
     * false: leave out host rows (Device Id `cpu`/`host`), which another
     * log read into the same rows holds too. Default true.
     */
    hostRows?: boolean;
  } = {},
): Promise<MemoryRows> {
  const rows = options.into ?? new MemoryRows();
  const { pid, untilNs } = options;
  const skipHost = options.hostRows === false;
  const num = new Float64Array(MEM_SLOTS);
  const summary = await readMemscopeCsv(source, (row) => {
    const event = row.event;
    if (event === "MALLOC" || event === "FREE") {
      const block = !RUNTIME_POOLS.has(row.eventType);
      const kind = event === "MALLOC"
        ? (block ? Kind.BlockAlloc : Kind.SegmentAlloc)
        : (block ? Kind.BlockFree : Kind.SegmentFree);
      // Most rows: every number plain, no stack, no filter but the pid.
      if (
        untilNs === undefined && row.memoryNumbers(num) &&
        num[MEM_STACKS] === 0
      ) {
        if (pid !== undefined && num[MEM_PID] !== pid) return;
        if (skipHost && num[MEM_DEVICE] === CPU_DEVICE) return;
        const size = Math.abs(num[MEM_SIZE]);
        if (event === "MALLOC" && size === 0) {
          rows.skipped++;
          return;
        }
        rows.append(
          kind,
          num[MEM_DEVICE],
          num[MEM_ID],
          num[MEM_TIME_US],
          num[MEM_PID],
          num[MEM_PTR],
          size,
          0,
        );
        return;
      }
      if (pid !== undefined && row.pid !== pid) return;
      if (untilNs !== undefined && Number(row.timestamp) > untilNs) return;
      if (skipHost && deviceCode(row.device) === CPU_DEVICE) return;
      const addr = row.ptr;
      const size = Math.abs(row.size ?? 0);
      // Past 2^53 two addresses could be one number (and past 2^63 no
      // pickle int of the viewer's holds them): no device maps so high.
      if (
        addr === undefined || typeof addr === "bigint" ||
        (event === "MALLOC" && size === 0)
      ) {
        rows.skipped++;
        return;
      }
      rows.push(kind, row, Number(addr), size);
    } else if (event === "OOM_DETAIL") {
      if (pid !== undefined && row.pid !== pid) return;
      if (untilNs !== undefined && Number(row.timestamp) > untilNs) return;
      if (skipHost && deviceCode(row.device) === CPU_DEVICE) return;
      const free = Number(
        row.attrValue("device_free") ?? row.attrValue("free"),
      );
      rows.push(
        Kind.Oom,
        row,
        Number.isFinite(free) ? free : 0,
        Math.abs(row.size ?? 0),
      );
    }
  }, { startsWith: { Event: "MFO" } });
  rows.bytes += summary.bytes;
  return rows;
}
