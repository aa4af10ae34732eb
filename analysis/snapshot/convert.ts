/**
 * An event log to a memory_viz snapshot: memory rows read once (48 bytes
 * each), put in time order, given a device where a FREE row says `N/A`, then
 * replayed device by device straight into the writer, so that the trace
 * never sits in memory.
 *
 * @module
 */
import type { EventLogSource } from "../memscope_csv/mod.ts";
import {
  type EndSegment,
  replayDevice,
  type Replayed,
  replaySteps,
} from "./allocator.ts";
import { Action, type SnapshotWriter, type TraceEntry } from "./emit.ts";
import {
  CPU_DEVICE,
  Kind,
  type MemoryRows,
  NO_DEVICE,
  readMemoryRows,
} from "./rows.ts";

/** Options of {@link writeSnapshot}. */
export interface SnapshotOptions {
  /** Only this device (its index in `device_traces`); default all. */
  device?: number;
  /** Keep at most this many trace entries per device, the newest. */
  maxEntries?: number;
  /** Write the history (`device_traces`); false: the end state only. */
  history?: boolean;
  /** Only the rows of this process. */
  pid?: number;
}

/** What a conversion wrote. */
export interface SnapshotSummary {
  /** Trace entries written, over all devices. */
  entries: number;
  /** Oldest entries left out by `maxEntries`. */
  dropped: number;
  segments: number;
  /** Devices in `device_traces`; the CPU's is `cpuDevice`. */
  devices: number;
  cpuDevice: number | undefined;
  /** Frees of memory allocated before the log began. */
  freedBeforeLog: number;
  /**
   * Live blocks or segments that an allocation overlapped: lost frees, or
   * two processes using one address of a device.
   */
  overlapped: number;
  /**
   * Rows left out: no address or size, an address past 2^53, or a free
   * whose device is unknown.
   */
  skipped: number;
  /** Bytes of the log read. */
  bytes: number;
}

/**
 * Gives each FREE row whose Device Id is `N/A` (old msMemScope files) the
 * device of the allocation it frees, and `cpu`/`host` rows the CPU's index;
 * rows whose device cannot be told are counted and left out.
 */
function resolveDevices(
  rows: MemoryRows,
  order: Uint32Array,
  cpu: number,
): void {
  const live = new Map<number, Map<number, number>>();
  for (let k = 0; k < order.length; k++) {
    const i = order[k];
    let device = rows.device(i);
    if (device === CPU_DEVICE) {
      device = cpu;
      rows.setDevice(i, cpu);
    }
    const kind = rows.kind(i);
    if (kind === Kind.Oom) continue;
    const pid = rows.pid.get(i);
    // Blocks and segments may share an address: keep them apart by sign.
    const key = kind === Kind.BlockAlloc || kind === Kind.BlockFree
      ? -1 - rows.addr.get(i)
      : rows.addr.get(i);
    let byAddr = live.get(pid);
    if (!byAddr) live.set(pid, byAddr = new Map());
    if (kind === Kind.SegmentAlloc || kind === Kind.BlockAlloc) {
      if (device !== NO_DEVICE) byAddr.set(key, device);
      continue;
    }
    if (device === NO_DEVICE) {
      const found = byAddr.get(key);
      if (found === undefined) rows.skipped++;
      else rows.setDevice(i, found);
    }
    byAddr.delete(key);
  }
}

/**
 * `order` (default: file order) cut into one list per device (rows of no
 * device left out).
 */
function splitByDevice(
  rows: MemoryRows,
  order: Uint32Array | undefined,
  devices: number,
): Uint32Array[] {
  const n = order?.length ?? rows.count;
  const counts = new Array<number>(devices).fill(0);
  for (let k = 0; k < n; k++) {
    const d = rows.device(order?.[k] ?? k);
    if (d >= 0 && d < devices) counts[d]++;
  }
  const lists = counts.map((n) => new Uint32Array(n));
  const at = new Array<number>(devices).fill(0);
  for (let k = 0; k < n; k++) {
    const i = order?.[k] ?? k;
    const d = rows.device(i);
    if (d >= 0 && d < devices) lists[d][at[d]++] = i;
  }
  return lists;
}

function writeSegments(
  w: SnapshotWriter,
  device: number,
  segs: EndSegment[],
  stacks: MemoryRows["stacks"],
): void {
  for (const s of segs) {
    let allocated = 0;
    for (const b of s.blocks) if (b.active) allocated += b.size;
    w.dictStart();
    w.key("device");
    w.int(device);
    w.key("address");
    w.int(s.address);
    w.key("total_size");
    w.int(s.size);
    w.key("stream");
    w.int(0);
    w.key("segment_type");
    w.str(s.size > 1 << 20 ? "large" : "small");
    w.key("allocated_size");
    w.int(allocated);
    w.key("active_size");
    w.int(allocated);
    w.key("requested_size");
    w.int(allocated);
    w.key("frames");
    w.frames(s.stack, stacks[s.stack]);
    w.key("blocks");
    w.listStart();
    for (const b of s.blocks) {
      w.dictStart();
      w.key("address");
      w.int(b.address);
      w.key("size");
      w.int(b.size);
      w.key("requested_size");
      w.int(b.size);
      w.key("state");
      w.str(b.active ? "active_allocated" : "inactive");
      w.key("frames");
      w.frames(b.stack, stacks[b.stack]);
      w.dictEnd();
    }
    w.listEnd();
    w.dictEnd();
  }
}

/**
 * Converts the event log `source` into a snapshot written through `w`
 * (`PickleWriter` or `JsonWriter`). Throws the reader's `MemscopeCsvError`
 * for a file that is not an event log, and a `RangeError` for a `device` the
 * log does not name.
 *
 * @example
 * ```ts
 * import { PickleWriter } from "./emit.ts";
 * import { writeSnapshot } from "./convert.ts";
 * using f = Deno.openSync("snap.pickle", { write: true, createNew: true });
 * const w = new PickleWriter((b) => f.writeSync(b));
 * const summary = await writeSnapshot("memscope_dump.csv", w);
 * console.log(summary.entries);
 * ```
 */
export async function writeSnapshot(
  source: EventLogSource,
  w: SnapshotWriter,
  options: SnapshotOptions = {},
): Promise<SnapshotSummary> {
  const rows = await readMemoryRows(source, { pid: options.pid });
  if (options.pid !== undefined && rows.count === 0) {
    // Refused, as a device the log does not name is: an empty snapshot
    // would look like a process that used no memory.
    throw new RangeError(`No memory rows of pid ${options.pid} in the log`);
  }
  return writeRowsSnapshot(rows, w, options);
}

/** {@link writeSnapshot} over rows already read. */
export function writeRowsSnapshot(
  rows: MemoryRows,
  w: SnapshotWriter,
  options: SnapshotOptions = {},
): SnapshotSummary {
  const steps = snapshotSteps(rows, w, options);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * {@link writeRowsSnapshot} in steps: the first `next()` checks the options
 * (throwing its `RangeError` there) and each later one writes some more
 * (a few thousand rows' worth), so that a consumer can send what the writer
 * flushed so far before it goes on; the last gives the summary.
 *
 * @example
 * ```ts
 * import { PickleWriter } from "./emit.ts";
 * import { readMemoryRows } from "./rows.ts";
 * import { snapshotSteps } from "./convert.ts";
 * const parts: Uint8Array[] = [];
 * const w = new PickleWriter((b) => parts.push(b.slice()));
 * const steps = snapshotSteps(await readMemoryRows("memscope_dump.csv"), w);
 * while (!steps.next().done) console.log(parts.length);
 * ```
 */
export function* snapshotSteps(
  rows: MemoryRows,
  w: SnapshotWriter,
  options: SnapshotOptions = {},
): Generator<void, SnapshotSummary> {
  const cpu = rows.hasCpu ? rows.maxDevice + 1 : undefined;
  // Most logs name a device on every memory row: nothing to resolve, and
  // each device's rows are put in time order apart (often they are).
  let order: Uint32Array | undefined;
  if (rows.hasCpu || rows.hasNoDevice) {
    order = rows.order();
    resolveDevices(rows, order, cpu ?? NO_DEVICE);
  }
  // An empty log still gets device 0: the viewer reads device_traces[0].
  const devices = Math.max(1, (cpu ?? rows.maxDevice) + 1);
  const wanted = options.device;
  const byDevice = splitByDevice(rows, order, devices);
  if (order === undefined) { for (const list of byDevice) rows.order(list); }
  if (
    wanted !== undefined &&
    (wanted >= devices || wanted < 0 || !Number.isInteger(wanted))
  ) {
    throw new RangeError(
      `No device ${wanted} in the log: it names device${
        devices > 1 ? "s" : ""
      } 0${devices > 1 ? `-${devices - 1}` : ""}${
        cpu !== undefined ? ` (${cpu} is the CPU)` : ""
      }`,
    );
  }
  const summary: SnapshotSummary = {
    entries: 0,
    dropped: 0,
    segments: 0,
    devices: wanted === undefined ? devices : wanted + 1,
    cpuDevice: cpu,
    freedBeforeLog: 0,
    overlapped: 0,
    skipped: rows.skipped,
    bytes: rows.bytes,
  };
  yield; // the options are good
  const history = options.history ?? true;
  const ends: EndSegment[][] = [];
  const entry: TraceEntry = {
    action: Action.Alloc,
    addr: 0,
    size: 0,
    timeUs: 0,
    stack: 0,
    frames: [],
  };
  w.dictStart();
  w.key("device_traces");
  w.listStart();
  for (let d = 0; d < summary.devices; d++) {
    w.listStart();
    if (wanted !== undefined && d !== wanted) {
      ends.push([]);
      w.listEnd();
      continue;
    }
    let skip = 0;
    if (history && options.maxEntries !== undefined) {
      let total = 0;
      replayDevice(rows, byDevice[d], d, () => total++);
      skip = Math.max(0, total - options.maxEntries);
    }
    let n = 0;
    const end: Replayed = yield* replaySteps(
      rows,
      byDevice[d],
      d,
      (action: Action, addr, size, stack, t, extra) => {
        if (!history) return;
        // A free is two entries the viewer joins: never keep half of one.
        if (
          n < skip ||
          (n === skip && skip > 0 && action === Action.FreeCompleted)
        ) {
          if (n === skip) skip++;
          n++;
          summary.dropped++;
          return;
        }
        n++;
        summary.entries++;
        entry.action = action;
        entry.addr = action === Action.Oom ? extra : addr;
        entry.size = size;
        entry.timeUs = t;
        entry.stack = stack;
        entry.frames = rows.stacks[stack];
        w.entry(entry);
      },
    );
    summary.freedBeforeLog += end.counts.freedBeforeLog;
    summary.overlapped += end.counts.lostFrees;
    ends.push(end.segments);
    w.listEnd();
  }
  w.listEnd();
  w.key("segments");
  w.listStart();
  for (let d = 0; d < ends.length; d++) {
    summary.segments += ends[d].length;
    writeSegments(w, d, ends[d], rows.stacks);
  }
  w.listEnd();
  w.dictEnd();
  w.finish();
  return summary;
}
