/**
 * Replays one device's memory rows into the allocator history and end state
 * that memory_viz draws (SPEC section 8), keeping every rule under which the
 * viewer throws (PYTORCH.md section 4) whatever the log holds:
 *
 * - runtime allocations are segments; allocator blocks (PTA, ATB, ...) are the
 *   blocks of the live segment that contains them (where live segments
 *   overlap, a log that lost frees: of those that reach the block, the one
 *   that starts last). A process that records no blocks on a device has
 *   each runtime allocation drawn as one block filling its segment, since
 *   the whole allocation is what it uses;
 * - a block no segment contains gets a segment of its own, and a freed block
 *   no live segment contains (allocated before the log began) is followed by
 *   the free of such a segment, so that no live block ever lies outside
 *   every segment when the viewer replays the history backwards;
 * - a free is always `free_requested` directly followed by `free_completed`,
 *   which the viewer joins into one free, so no `free_requested` can name a
 *   block it does not know;
 * - a block allocated over live blocks of its segment, or a segment allocated
 *   again at a live address, means the log lost their frees: they are freed
 *   first, so blocks never overlap.
 *
 * @module
 */
import { AddrSet } from "./_addr_set.ts";
import { Action } from "./emit.ts";
import { Kind, type MemoryRows } from "./rows.ts";

/** Receives trace entries in order. `extra`: `device_free` of an oom. */
export type EntrySink = (
  action: Action,
  addr: number,
  size: number,
  stack: number,
  timeUs: number,
  extra: number,
) => void;

/** A block of the end state. */
export interface EndBlock {
  address: number;
  size: number;
  stack: number;
  /** false: free space of the segment (`inactive`). */
  active: boolean;
}

/** A segment of the end state, its blocks tiling it in address order. */
export interface EndSegment {
  address: number;
  size: number;
  stack: number;
  blocks: EndBlock[];
}

interface Seg {
  addr: number;
  size: number;
  stack: number;
  /** Drawn as one block filling it (no allocator blocks recorded). */
  whole: boolean;
  /** Made here for blocks no segment contained; goes with its last block. */
  own: boolean;
  /** Addresses of its live blocks; they never overlap. */
  addrs: AddrSet;
}

interface Blk {
  size: number;
  stack: number;
  seg: Seg;
}

/** What a replay found. */
export interface ReplayCounts {
  /** Frees of blocks or segments allocated before the log began. */
  freedBeforeLog: number;
  /** Live blocks or segments an allocation overlapped: freed first. */
  lostFrees: number;
}

/**
 * Replays the rows of `device` (in the order `order` gives) into `sink`, and
 * returns the end state. `cpu` is the device number that `cpu`/`host` rows
 * were given.
 *
 * @example
 * ```ts
 * import { readMemoryRows } from "./rows.ts";
 * import { replayDevice } from "./allocator.ts";
 * const rows = await readMemoryRows("memscope_dump.csv");
 * const end = replayDevice(rows, rows.order(), 0, () => {});
 * console.log(end.segments.length);
 * ```
 */
export function replayDevice(
  rows: MemoryRows,
  order: Uint32Array,
  device: number,
  sink: EntrySink,
): Replayed {
  const steps = replaySteps(rows, order, device, sink);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** What {@link replayDevice} gives. */
export interface Replayed {
  segments: EndSegment[];
  counts: ReplayCounts;
}

/** Rows replayed between two pauses of {@link replaySteps}. */
export const REPLAY_SLICE = 16384;

/**
 * {@link replayDevice} in slices: pauses (yields) after every
 * {@link REPLAY_SLICE} rows, so that a consumer can send what the sink got
 * so far before the replay goes on.
 */
export function* replaySteps(
  rows: MemoryRows,
  order: Uint32Array,
  device: number,
  sink: EntrySink,
): Generator<void, Replayed> {
  const counts: ReplayCounts = { freedBeforeLog: 0, lostFrees: 0 };
  const emit = sink;
  const segs = new Map<number, Seg>();
  const blocks = new Map<number, Blk>();
  // Live segments that can hold blocks (not those used whole: a process
  // without blocks may free thousands in address order), by address: a log
  // whose blocks lie in no segment (they were made before it began) makes
  // and frees one per block, tens of thousands live at once.
  const live = new AddrSet();
  /** The largest size entered in `live`. */
  let widest = 0;
  /**
   * The live segment holding [addr, addr + size): of those that reach addr,
   * the one that starts last, if it holds all of it. Segments do not
   * overlap but in a log that lost frees: there, one nested in another may
   * end below addr, and those that start before it are looked at,
   * {@link WALK_BACK} at most.
   */
  const containing = (addr: number, size: number): Seg | undefined => {
    let looked = 0;
    for (const start of live.downFrom(addr)) {
      // None that starts this far below addr reaches it.
      if (looked++ === WALK_BACK || start + widest <= addr) return undefined;
      const s = segs.get(start)!;
      const end = s.addr + s.size;
      if (addr < end) return addr + size <= end ? s : undefined;
    }
    return undefined;
  };

  /** Block `b` at `addr` freed, but for its place in its segment. */
  const releaseBlock = (addr: number, b: Blk, stack: number, t: number) => {
    emit(Action.FreeRequested, addr, b.size, stack, t, 0);
    emit(Action.FreeCompleted, addr, b.size, stack, t, 0);
    blocks.delete(addr);
  };
  const freeBlock = (addr: number, b: Blk, stack: number, t: number) => {
    releaseBlock(addr, b, stack, t);
    b.seg.addrs.delete(addr);
  };
  const freeSegment = (s: Seg, stack: number, t: number) => {
    if (s.whole) {
      emit(Action.FreeRequested, s.addr, s.size, stack, t, 0);
      emit(Action.FreeCompleted, s.addr, s.size, stack, t, 0);
    }
    // Lowest first, then the set emptied at once.
    for (const addr of s.addrs) releaseBlock(addr, blocks.get(addr)!, stack, t);
    s.addrs.clear();
    emit(Action.SegmentFree, s.addr, s.size, stack, t, 0);
    segs.delete(s.addr);
    if (!s.whole) live.delete(s.addr);
  };
  const allocSegment = (s: Seg, t: number) => {
    const old = segs.get(s.addr);
    if (old) {
      counts.lostFrees++;
      freeSegment(old, old.stack, t);
    }
    segs.set(s.addr, s);
    if (!s.whole) {
      live.insert(s.addr);
      if (s.size > widest) widest = s.size;
    }
    emit(Action.SegmentAlloc, s.addr, s.size, s.stack, t, 0);
    // Its one block is the segment itself: not in `blocks`, no list.
    if (s.whole) emit(Action.Alloc, s.addr, s.size, s.stack, t, 0);
  };

  for (let k = 0; k < order.length; k++) {
    if (k % REPLAY_SLICE === REPLAY_SLICE - 1) yield;
    const i = order[k];
    if (rows.device(i) !== device) continue;
    const kind = rows.kind(i);
    const addr = rows.addr.get(i);
    const size = rows.size.get(i);
    const stack = rows.stack.get(i);
    const t = rows.timeUs.get(i);
    switch (kind) {
      case Kind.SegmentAlloc: {
        const whole = !rows.blockLevel.has(`${rows.pid.get(i)}:${device}`);
        allocSegment(
          {
            addr,
            size,
            stack,
            whole,
            own: false,
            addrs: whole ? NONE : new AddrSet(),
          },
          t,
        );
        break;
      }
      case Kind.SegmentFree: {
        const s = segs.get(addr);
        if (s) {
          freeSegment(s, stack, t);
        } else if (size > 0) {
          counts.freedBeforeLog++;
          // Drawn as allocated before the trace began: a runtime allocation
          // of a process without blocks was in use, so its block goes too.
          if (!rows.blockLevel.has(`${rows.pid.get(i)}:${device}`)) {
            emit(Action.FreeRequested, addr, size, stack, t, 0);
            emit(Action.FreeCompleted, addr, size, stack, t, 0);
          }
          emit(Action.SegmentFree, addr, size, stack, t, 0);
        }
        break;
      }
      case Kind.BlockAlloc: {
        const old = blocks.get(addr);
        if (old && !old.seg.whole) {
          counts.lostFrees++;
          freeBlock(addr, old, old.stack, t);
          if (old.seg.own && !old.seg.addrs.size) {
            freeSegment(old.seg, old.stack, t);
          }
        }
        let seg = containing(addr, size);
        if (seg) {
          for (const at of overlapping(seg.addrs, blocks, addr, size)) {
            counts.lostFrees++;
            freeBlock(at, blocks.get(at)!, blocks.get(at)!.stack, t);
          }
        } else {
          seg = {
            addr,
            size,
            stack,
            whole: false,
            own: true,
            addrs: new AddrSet(),
          };
          allocSegment(seg, t);
        }
        blocks.set(addr, { size, stack, seg });
        seg.addrs.insert(addr);
        emit(Action.Alloc, addr, size, stack, t, 0);
        break;
      }
      case Kind.BlockFree: {
        const b = blocks.get(addr);
        if (b && !b.seg.whole) {
          freeBlock(addr, b, stack, t);
          if (b.seg.own && !b.seg.addrs.size) freeSegment(b.seg, stack, t);
        } else if (size > 0) {
          counts.freedBeforeLog++;
          emit(Action.FreeRequested, addr, size, stack, t, 0);
          emit(Action.FreeCompleted, addr, size, stack, t, 0);
          if (!containing(addr, size)) {
            emit(Action.SegmentFree, addr, size, stack, t, 0);
          }
        }
        break;
      }
      case Kind.Oom:
        emit(Action.Oom, 0, size, stack, t, addr);
        break;
    }
  }
  return { segments: endState(segs, blocks), counts };
}

/**
 * Live segments {@link replaySteps} looks at for one holding a block, from
 * the last to start at or below it back (replay.c WALK_BACK).
 */
const WALK_BACK = 64;

/** The block set of every segment used whole: never written to. */
const NONE = new AddrSet();

/** Addresses in `addrs` of blocks overlapping [addr, addr + size). */
function overlapping(
  addrs: AddrSet,
  blocks: Map<number, Blk>,
  addr: number,
  size: number,
): number[] {
  const near = addrs.nearby(addr, addr + size);
  // The block below addr overlaps it only where it runs past it.
  if (
    near.length && near[0] < addr && near[0] + blocks.get(near[0])!.size <= addr
  ) near.shift();
  return near;
}

/** Live segments by address, each tiled by its blocks and free space. */
function endState(
  segs: Map<number, Seg>,
  blocks: Map<number, Blk>,
): EndSegment[] {
  const out: EndSegment[] = [];
  const whole = (s: Seg): EndSegment => ({
    address: s.addr,
    size: s.size,
    stack: s.stack,
    blocks: [{ address: s.addr, size: s.size, stack: s.stack, active: true }],
  });
  for (const s of [...segs.values()].sort((a, b) => a.addr - b.addr)) {
    if (s.whole) {
      out.push(whole(s));
      continue;
    }
    const addrs = s.addrs;
    const tiles: EndBlock[] = [];
    let at = s.addr;
    const end = s.addr + s.size;
    for (const addr of addrs) {
      const b = blocks.get(addr)!;
      // Overlapping blocks (a log that lost a free) cannot both be drawn:
      // the later one is cut to what is left.
      const from = Math.max(addr, at);
      const to = Math.min(addr + b.size, end);
      if (to <= from) continue;
      if (from > at) {
        tiles.push({ address: at, size: from - at, stack: 0, active: false });
      }
      tiles.push({
        address: from,
        size: to - from,
        stack: b.stack,
        active: true,
      });
      at = to;
    }
    if (at < end) {
      tiles.push({ address: at, size: end - at, stack: 0, active: false });
    }
    out.push({ address: s.addr, size: s.size, stack: s.stack, blocks: tiles });
  }
  return out;
}
