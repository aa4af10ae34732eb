/**
 * One traced process as the daemon follows it: its ring, the blocks it has
 * live, the ops in flight (so a sample knows which op it brackets and what
 * that op was allowed to write), and its watches.
 *
 * @module
 */
import { REC, RING } from "../ffi/bindings.ts";
import {
  type AllocEvent,
  type FreeEvent,
  type OpEvent,
  overlapsAny,
  POOL_CODE,
  POOLS,
  type TracedEvent,
} from "../analysis/events.ts";
import { ALLOC_CALLS, type LiveBlock } from "../analysis/live_blocks.ts";
import { OnlineLeaks } from "../analysis/leaks/mod.ts";
import type { DumpWriter } from "../watch/dump_writer.ts";
import { hexAddr, WatchBook } from "../watch/watch_book.ts";
import { parseWatchSpec } from "./watch_spec.ts";
import {
  type BlockFilter,
  type BlockInfo,
  type EventGap,
  ServiceError,
} from "../watch/types.ts";
import type {
  RecordCursor,
  RecordHandler,
  RingHeader,
  RingReader,
} from "./ring_reader.ts";

/**
 * An ALLOC from a framework (the Python client) names what made it:
 * `op\towner\tstack`, each part possibly empty; the hook's own have no name.
 */
function labelAlloc(e: AllocEvent, r: RecordCursor): void {
  const [op, owner, stack] = r.hasName ? r.name.split("\t") : [];
  e.op = op || undefined;
  e.owner = owner || undefined;
  e.pythonStack = stack || undefined;
}

const ACCESS_KINDS = ["READ", "WRITE", "UNKNOWN"] as const;

/** An ACCESS record: `op\tdtype\tshape\tstack` in its name. */
function accessOf(
  base: { pid: number; tid: number; ts: number; device: number },
  r: RecordCursor,
): TracedEvent {
  const [op = "", dtype = "", shape = "", stack] = r.name.split("\t");
  return {
    ...base,
    kind: "access",
    op,
    addr: r.addr,
    size: r.len,
    access: ACCESS_KINDS[r.aux] ?? "UNKNOWN",
    dtype,
    shape,
    pythonStack: stack || undefined,
  };
}

/** An op bracketed by OP_BEGIN and OP_END: watches sample around it. */
interface OpInFlight {
  name: string;
  callCount: number;
  /** Its output buffers as [addr, length]: what it may write. */
  outputs: Array<[number, number]>;
  tid: number;
  ts: number;
  device: number;
}

/**
 * Receives every event, in ring order (the event log). The event is valid
 * only during the call: allocations, frees and op launches reuse one object each.
 */
export type EventListener = (e: TracedEvent) => void;

function cliFullContent(spec: string): boolean {
  try {
    return parseWatchSpec(spec).fullContent;
  } catch {
    return false; // no spec, or one the hook ignores too
  }
}

/** How long a request waits for the pump to read past a record that stays unfinished. */
export const CATCH_UP_MS = 2000;

/**
 * Resolves once the pump has read every record `p`'s ring held when this
 * was called, or once `p` is finished or the pump has stopped. Handlers
 * wait for this instead of reading the ring themselves. A record the job
 * reserved and never finished (it died in between) stops the pump for
 * good: an exited process is waited for only while the pump still reads
 * from it, and a live one for at most {@linkcode CATCH_UP_MS}.
 *
 * @example
 * ```ts
 * import { caughtUp, type TracedProcess } from "./traced_process.ts";
 * import type { Registry } from "./registry.ts";
 * export async function fresh(p: TracedProcess, registry: Registry) {
 *   await caughtUp(p, () => registry.nextRound());
 * }
 * ```
 */
export async function caughtUp(
  p: TracedProcess,
  nextRound: () => Promise<boolean>,
): Promise<void> {
  if (p.finished) return;
  const target = p.reader.published();
  const deadline = Date.now() + CATCH_UP_MS;
  while (!p.finished && !p.reader.readPast(target)) {
    const before = p.reader.position();
    if (!await nextRound()) return;
    if (p.exited && p.reader.position() === before) return;
    if (Date.now() >= deadline) {
      throw new ServiceError(
        "unavailable",
        `Cannot catch up with pid ${p.pid}: its ring has a record that was reserved ${CATCH_UP_MS} ms ago and is still unfinished (is the job stopped?); try again later`,
      );
    }
  }
}

/** Follows one process. */
export class TracedProcess implements RecordHandler {
  readonly pid: number;
  readonly reader: RingReader;
  readonly header: RingHeader;
  readonly book: WatchBook;
  readonly startedAt: Date;
  /** Its live blocks, steps and leak suspects. */
  readonly memory: OnlineLeaks;
  exited = false;
  /** Set once its ring is drained and closed. */
  finished = false;
  /** Whether the job's --watch spec asked for full-content windows. */
  #cliFullContent: boolean;
  #dropped = 0;
  #ops = new Map<number, OpInFlight>();
  /** Name id of the op launched last (-1: none yet, or a name the table had no room for). */
  #lastOp = -1;
  /** Calls so far of each op, by its name's id in the ring's name table. */
  #calls: number[] = [];
  /** The same for names the table had no room for. */
  #callsByName = new Map<string, number>();
  #writer: DumpWriter;
  #listeners: EventListener[];
  #scratch: { alloc: AllocEvent; free: FreeEvent; op: OpEvent };
  /** Called when a watch ends in the hook, so the table can drop it. */
  onWatchClosed: () => void = () => {};

  /** Starts following the process behind `reader`. */
  constructor(
    reader: RingReader,
    writer: DumpWriter,
    listeners: EventListener[],
  ) {
    this.reader = reader;
    this.header = reader.header();
    this.pid = this.header.pid;
    this.memory = new OnlineLeaks(this.pid);
    const base = { pid: this.pid, tid: 0, ts: 0, device: -1 };
    this.#scratch = {
      alloc: {
        ...base,
        kind: "alloc",
        addr: 0,
        size: 0,
        pool: "HAL",
        result: 0,
        allocationId: 0,
      },
      free: {
        ...base,
        kind: "free",
        addr: 0,
        size: 0,
        pool: "HAL",
        result: 0,
        allocationId: 0,
      },
      op: { ...base, kind: "op", name: "", result: 0 },
    };
    this.book = new WatchBook(this.pid);
    this.#cliFullContent = cliFullContent(this.header.cliWatch);
    this.startedAt = new Date(this.header.startNs / 1e6);
    this.#writer = writer;
    this.#listeners = listeners;
  }

  /** Whether the hook saw ASCEND_LAUNCH_BLOCKING=1 in the job. */
  get launchBlocking(): boolean {
    return (this.header.flags & RING.FLAG_LAUNCH_BLOCKING) !== 0;
  }

  /**
   * Takes what the ring's header says before the ring is unmapped: the
   * count of records the hook could not deliver, and, when the job lost
   * events no GAP record told of (it ended, or the daemon stops, before the
   * hook could trace again), says so once.
   */
  settle(): void {
    if (this.finished) return;
    const { droppedEvents, flags } = this.reader.header();
    this.#dropped = droppedEvents;
    if (droppedEvents <= this.#lostTold) return;
    const last = this.gaps.at(-1);
    if (last && !(flags & RING.FLAG_STALLED)) {
      // Tracing went on after the last gap: these few are threads that
      // counted their loss just after its record was written.
      last.lostEvents += droppedEvents - this.#lostTold;
      this.#lostTold = droppedEvents;
    } else this.#gap(Date.now() * 1e6, null, droppedEvents);
  }

  /** Times the daemon did not read this ring while the job lost events, oldest first. */
  readonly gaps: EventGap[] = [];
  /** Lost events the GAP records have told of so far. */
  #lostTold = 0;

  /**
   * The daemon did not read for `silentNs` (null: unknown) and the job
   * lost events: the total is `lostSoFar`. Says it once, lists it for GET
   * /health, and marks the live watches, whose samples of that time are lost.
   */
  #gap(atNs: number, silentNs: number | null, lostSoFar: number): void {
    const lost = Math.max(0, lostSoFar - this.#lostTold);
    this.#lostTold = Math.max(this.#lostTold, lostSoFar);
    this.gaps.push({
      pid: this.pid,
      at: new Date(atNs / 1e6).toISOString(),
      silentMs: silentNs === null ? null : Math.round(silentNs / 1e6),
      lostEvents: lost,
    });
    for (const w of this.book.live()) {
      w.verdict.markGap();
      w.gaps = (w.gaps ?? 0) + 1;
    }
    const silent = silentNs !== null
      ? `for ${(silentNs / 1e9).toFixed(1)} s`
      : this.exited
      ? "before the job ended"
      : "before it stopped";
    console.error(
      `stompwatch: pid ${this.pid}: the daemon did not read ${silent}; the job lost ${lost} events (they are missing from the event log and counted in droppedEvents of GET /processes)`,
    );
  }

  /**
   * Records the hook could not deliver, and the unfinished record the job
   * left at its ring's end (see {@linkcode lostTail}); the ring is read
   * only while mapped.
   */
  droppedEvents(): number {
    if (!this.finished) this.#dropped = this.reader.header().droppedEvents;
    return this.#dropped + this.#lostRecords;
  }

  #lostRecords = 0;

  /**
   * Counts the unread end of its ring as dropped: the job died between
   * reserving a record and finishing it, so nothing after it can be read.
   * Returns the bytes lost.
   */
  lostTail(): number {
    this.#lostRecords = 1;
    return this.reader.unreadBytes();
  }

  /** Reads what the ring holds; returns the number of records. */
  pump(budget?: number): number {
    const n = this.reader.drain(this, budget);
    this.recordsRead += n;
    return n;
  }

  /** Records read from the ring so far. */
  recordsRead = 0;

  /**
   * A mark from outside the job (`POST /marks`), on the device the process
   * used last. The caller waits for {@linkcode caughtUp} first, so that it
   * follows every event the ring held when it was asked for.
   */
  mark(message: string): void {
    const ts = Math.round((performance.timeOrigin + performance.now()) * 1e6);
    this.#emit({
      pid: this.pid,
      tid: 0,
      ts,
      device: this.#lastDevice,
      kind: "mark",
      message,
    });
  }

  #lastDevice = -1;

  #emit(e: TracedEvent): void {
    for (const l of this.#listeners) l(e);
  }

  #track(e: TracedEvent): void {
    this.memory.track(e);
    this.#emit(e);
  }

  #base(r: RecordCursor) {
    return { pid: this.pid, tid: r.tid, ts: r.ts, device: r.device };
  }

  // Hot path: the events handed on are the process's reusable scratch
  // objects, so nothing is allocated per record.
  /** Takes one record of its ring (the reader calls this while draining). */
  record(r: RecordCursor): void {
    const device = r.device;
    if (device >= 0) this.#lastDevice = device;
    switch (r.type) {
      case REC.ALLOC: {
        const e = this.#scratch.alloc;
        e.tid = r.tid;
        e.ts = r.ts;
        e.device = device;
        e.addr = r.addr;
        e.size = r.len;
        e.pool = POOLS[r.aux] ?? "HAL";
        e.result = r.result;
        if (r.hasName || e.op !== undefined || e.owner !== undefined) {
          labelAlloc(e, r);
        }
        this.memory.allocated(e);
        if (e.allocationId !== 0) {
          const live = this.memory.live, row = live.lastRow;
          live.op[row] = this.#lastOp;
          live.call[row] = r.id;
        }
        this.#emit(e);
        return;
      }
      case REC.FREE: {
        const e = this.#scratch.free;
        e.tid = r.tid;
        e.ts = r.ts;
        e.device = device;
        e.addr = r.addr;
        e.pool = POOLS[r.aux] ?? "HAL";
        e.result = r.result;
        this.memory.freed(e);
        this.#emit(e);
        return;
      }
      case REC.OP_BEGIN: {
        const op = this.#opOf(r);
        this.#ops.set(r.id, op);
        if (r.flags & REC.FLAG_FRAMEWORK) {
          this.#framework(op, "start", 0, r.ts, undefined);
        }
        return;
      }
      case REC.OP_END: {
        const op = this.#ops.get(r.id);
        this.#ops.delete(r.id);
        if (!op) return;
        if (r.flags & REC.FLAG_FRAMEWORK) {
          // The end row carries the call stack (known once the op is done).
          const stack = r.hasName ? r.text : undefined;
          this.#framework(op, "end", r.result, r.ts, stack);
        } else this.#launched(op.tid, op.ts, op.device, op.name, r.result);
        return;
      }
      case REC.OP: {
        const id = r.nameId;
        const name = r.nameOf(id);
        this.#countCall(id, name);
        this.#lastOp = id;
        this.#launched(r.tid, r.ts, device, name, r.result);
        return;
      }
      case REC.MARK:
        this.#emit({ ...this.#base(r), kind: "mark", message: r.name });
        return;
      case REC.ACCESS:
        this.#emit(accessOf(this.#base(r), r));
        return;
      case REC.RANGE_START:
        this.#track({
          ...this.#base(r),
          kind: "range_start",
          id: r.id,
          message: r.name,
        });
        return;
      case REC.RANGE_END:
        this.#track({ ...this.#base(r), kind: "range_end", id: r.id });
        return;
      case REC.PROC_START:
        this.#emit({ ...this.#base(r), kind: "proc_start", command: r.name });
        return;
      case REC.PROC_EXIT:
        this.exited = true;
        this.#emit({ ...this.#base(r), kind: "proc_exit" });
        return;
      case REC.WINDOW_OPEN:
        this.book.openWindow(r.aux, {
          name: this.#windowName(r.name),
          addr: r.addr,
          length: r.len,
          outid: r.result,
          device: r.device,
          fullContent: this.#cliFullContent,
        });
        return;
      case REC.WATCH_CLOSED:
        if (this.book.closed(r.aux)) this.onWatchClosed();
        return;
      case REC.DUMP_DATA:
        if (this.book.get(r.aux)) {
          this.#writer.appendContent(this.pid, r.id, r.content());
        }
        return;
      case REC.DUMP:
        this.#onSample(r);
        return;
      case REC.GAP:
        this.#gap(r.ts, r.len, r.addr);
        return;
    }
  }

  /** Counts a call of the op named `name` (name id `id`); returns its calls so far. */
  #countCall(id: number, name: string): number {
    if (id < 0) {
      const n = (this.#callsByName.get(name) ?? 0) + 1;
      this.#callsByName.set(name, n);
      return n;
    }
    const calls = this.#calls;
    while (calls.length <= id) calls.push(0);
    return ++calls[id];
  }

  /** Calls so far of the op named `name`. */
  #callsOf(name: string): number {
    const id = this.reader.names.idOf(name);
    return id === undefined
      ? this.#callsByName.get(name) ?? 0
      : this.#calls[id] ?? 0;
  }

  /** Counts the call and reads what the op may write. */
  #opOf(r: RecordCursor): OpInFlight {
    const id = r.nameId;
    const name = r.nameOf(id);
    const outputs: Array<[number, number]> = [];
    for (let i = 0, n = r.aux; i < n; i++) {
      outputs.push([r.payloadU64(2 * i), r.payloadU64(2 * i + 1)]);
    }
    const callCount = this.#countCall(id, name);
    this.#lastOp = id;
    return { name, callCount, outputs, tid: r.tid, ts: r.ts, device: r.device };
  }

  // A framework op's start or end row: not a launch onto the device.
  #framework(
    op: OpInFlight,
    phase: "start" | "end",
    result: number,
    ts: number,
    pythonStack: string | undefined,
  ): void {
    const { tid, device, name } = op;
    this.#emit({
      pid: this.pid,
      tid,
      ts,
      device,
      kind: "op",
      name,
      result,
      framework: phase,
      ...(pythonStack ? { pythonStack } : {}),
    });
  }

  // One event per op, whether the hook wrote it as one record or two.
  #launched(
    tid: number,
    ts: number,
    device: number,
    name: string,
    result: number,
  ): void {
    const e = this.#scratch.op;
    e.tid = tid;
    e.ts = ts;
    e.device = device;
    e.name = name;
    e.result = result;
    this.memory.launched();
    this.#emit(e);
  }

  /**
   * A CLI window is named after its start op, told apart from any live
   * watch writing files under that name by the start op's call count.
   */
  #windowName(start: string): string {
    return this.book.windowName(start, this.#callsOf(start));
  }

  #onSample(r: RecordCursor): void {
    const w = this.book.get(r.aux);
    if (!w) return;
    const op = this.#ops.get(r.id) ??
      { name: "unknown", callCount: 0, outputs: [] as Array<[number, number]> };
    const phase = (r.flags & REC.FLAG_AFTER) ? "after" : "before";
    const checksum = r.payloadBigU64(0);
    const parts = {
      device: r.device,
      tid: r.tid,
      op: op.name,
      callCount: op.callCount,
      name: w.name,
      outid: w.outid,
      phase,
    } as const;
    const file = (r.flags & REC.FLAG_CONTENT)
      ? this.#writer.finishContent(this.pid, r.payloadU64(1), parts)
      : this.#writer.writeChecksum(this.pid, parts, checksum);
    w.device = r.device;
    if (phase === "after") w.dumpsTaken++;
    if (r.flags & REC.FLAG_FAILED) {
      // The copy failed (the block was freed?): this sample proves nothing.
      w.verdict.markGap();
      w.unreadSamples = (w.unreadSamples ?? 0) + 1;
      return;
    }
    w.verdict.add({
      phase,
      op: op.name,
      callCount: op.callCount,
      checksum,
      file,
      allowed: overlapsAny(w.addr, w.length, op.outputs),
      outside: (r.flags & REC.FLAG_OUTSIDE) ? r.payloadBigU64(2) : undefined,
    });
  }

  /** Its live blocks that pass `filter`, newest first, and how many passed. */
  blocks(filter: BlockFilter): { matched: number; blocks: BlockInfo[] } {
    const live = this.memory.live;
    const pool = filter.pool === undefined ? -1 : POOL_CODE[filter.pool];
    const device = filter.device ?? -1, minSize = filter.minSize ?? 0;
    let matched = 0;
    const rows = live.newest(filter.limit, (row) => {
      const ok = (device < 0 || live.device[row] === device) &&
        (pool < 0 || live.pool[row] === pool) && live.size[row] >= minSize;
      if (ok) matched++;
      return ok;
    });
    const nowNs = (performance.timeOrigin + performance.now()) * 1e6;
    const names = this.reader.names.texts;
    return {
      matched,
      blocks: rows.map((row) => {
        const op = live.op[row];
        const pool = POOLS[live.pool[row]];
        return {
          addr: hexAddr(live.addr[row]),
          size: live.size[row],
          device: live.device[row],
          pool,
          owner: null,
          op: op >= 0 ? names[op] : null,
          // The hook only reports aclrtMalloc and its siblings (HAL).
          call: pool === "HAL" ? ALLOC_CALLS[live.call[row]] ?? null : null,
          ageMs: Math.max(0, Math.round((nowNs - live.ts[row]) / 1e6)),
          allocationId: live.allocationId[row],
          step: live.step[row],
        };
      }),
    };
  }

  /**
   * The live block that holds [addr, addr+length), or the nearest one.
   */
  locate(
    addr: number,
    length: number,
  ): { inside?: LiveBlock; nearest?: LiveBlock } {
    const live = this.memory.live;
    let nearest = -1, best = Infinity;
    for (const row of live.rows()) {
      const start = live.addr[row], end = start + live.size[row];
      if (start <= addr && addr + length <= end) {
        return { inside: live.block(row) };
      }
      const distance = addr < start ? start - addr : Math.max(0, addr - end);
      if (distance < best) {
        best = distance;
        nearest = row;
      }
    }
    return { nearest: nearest < 0 ? undefined : live.block(nearest) };
  }
}
