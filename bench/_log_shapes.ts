/**
 * The matrix of msMemScope-format logs the analysis rows are timed on
 * (issue 11): shapes that stress different parts of check-leaks, compare and
 * snapshot (memory rows with addresses never reused, op and kernel rows,
 * PTA-heavy with HAL sparse, many devices interleaved or one after another,
 * IDs in file order or not), plus the real fixtures repeated to the same
 * size. Each shape also has a variant, the "next step" of the same job (the
 * same ops, a few renamed, other sizes), so that compare has a realistic
 * pair to align.
 *
 * @module
 */
import { formatPtr } from "../analysis/memscope_csv/mod.ts";

/** What a generated log is made of. */
export interface LogShape {
  /** Short label for the bench table. */
  name: string;
  /**
   * memory: 80% HAL MALLOC/FREE rows, addresses never reused; op: ops and
   * kernel launches, few memory rows; pta: PTA MALLOC/FREE rows with HAL
   * rows sparse; segment: PTA blocks carved from one HAL segment a device
   * that holds `held` of them live (expandable segments: one segment a
   * stream holds every block), freed after them at the end.
   */
  mix: "memory" | "op" | "pta" | "segment";
  devices: number;
  /** interleaved: the devices' ops alternate; sequential: one after another. */
  layout: "interleaved" | "sequential";
  /**
   * ordered: IDs increase down the file; shuffled: rows out of ID order;
   * at-free: as msMemScope writes its log, each MALLOC row just before the
   * FREE row of its block (a long-lived block's far behind the IDs round
   * it), those of blocks never freed at the end.
   */
  ids: "ordered" | "shuffled" | "at-free";
  /**
   * Memory rows carry a Python and a C call stack (msMemScope's call_stack
   * option), quoted, a frame a line: more newlines inside quotes than
   * between rows. Such rows are long: the log gets fewer of them.
   */
  stacks?: { rows: number };
  /**
   * whole: one `step` mark before each device's rows and two after them,
   * so that one window holds every row (a job marked at its start and end
   * only); otherwise six marks a device, a window a third of its rows.
   */
  window?: "whole";
  /**
   * memory and segment: how many blocks a device holds at once (64 when
   * not given): a job holding hundreds of thousands through its window has
   * every one pending in check-leaks' replay at once (Infinity: none is
   * freed until every row and mark is written).
   */
  held?: number;
  /**
   * segment: the segment was made before the log began (no HAL row), so
   * that each block lies in no segment the log shows.
   */
  before?: boolean;
}

/** The generated shapes, the issue's own first. */
export const SHAPES: readonly LogShape[] = [
  {
    name: "memory 80%, 3 devices one after another, IDs in order",
    mix: "memory",
    devices: 3,
    layout: "sequential",
    ids: "ordered",
  },
  {
    name: "memory 80%, 2 devices interleaved, IDs out of order",
    mix: "memory",
    devices: 2,
    layout: "interleaved",
    ids: "shuffled",
  },
  {
    name: "op-heavy, 2 devices interleaved, IDs in order",
    mix: "op",
    devices: 2,
    layout: "interleaved",
    ids: "ordered",
  },
  {
    name: "PTA-heavy, HAL sparse, 1 device, IDs out of order",
    mix: "pta",
    devices: 1,
    layout: "sequential",
    ids: "shuffled",
  },
  {
    name: "PTA-heavy, 16 devices interleaved, IDs in order",
    mix: "pta",
    devices: 16,
    layout: "interleaved",
    ids: "ordered",
  },
  {
    name: "op-heavy, 8 devices one after another, IDs out of order",
    mix: "op",
    devices: 8,
    layout: "sequential",
    ids: "shuffled",
  },
  {
    name: "memory 80% with call stacks, 1 device, IDs in order",
    mix: "memory",
    devices: 1,
    layout: "sequential",
    ids: "ordered",
    stacks: { rows: 250_000 },
  },
  {
    name: "PTA blocks of one HAL segment, 50,000 live, 1 device, IDs in order",
    mix: "segment",
    devices: 1,
    layout: "sequential",
    ids: "ordered",
    held: 50_000,
  },
  {
    name:
      "PTA blocks of a HAL segment made before the log, 50,000 live, 1 device, IDs in order",
    mix: "segment",
    devices: 1,
    layout: "sequential",
    ids: "ordered",
    held: 50_000,
    before: true,
  },
  {
    // Rows of one device seldom follow another's: each row's device is
    // looked up among 200 names (the hostile tester's shape, 2026-11-27).
    name: "memory 80%, 200 devices interleaved, IDs in order",
    mix: "memory",
    devices: 200,
    layout: "interleaved",
    ids: "ordered",
  },
];

/** A call stack of `frames` lines, quoted, as msMemScope writes one. */
function callStack(lang: "py" | "c", frames: number, seed: number): string {
  const lines = Array.from(
    { length: frames },
    (_, i) =>
      lang === "py"
        ? `/usr/lib/python3/site-packages/torch/nn/modules/module.py(${
          1500 + (seed + i) % 97
        }): _call_impl`
        : `/usr/local/Ascend/lib64/libascendcl.so(aclrtMalloc+0x${
          ((seed * 7 + i) % 4096).toString(16)
        }) [0x7f00000${i}a10]`,
  );
  return `"${lines.join("\n")}"`;
}

/** What was written. */
export interface WrittenLog {
  path: string;
  rows: number;
  bytes: number;
  /** Copies of a repeated fixture (1 for a generated log). */
  copies: number;
}

const HEADER =
  "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n";

const OPS = [
  "torch._ops.aten.addmm.default",
  "torch._ops.aten.mse_loss.default",
  "torch._ops.aten.mm.default",
  "torch._ops.aten.t.default",
  "torch._ops.aten.ones_like.default",
  "torch._ops.aten.mse_loss_backward.default",
  "torch._ops.aten.empty_strided.default",
  "torch._ops.aten.copy_.default",
];
const KERNELS = ["MatMulV2", "Add", "Mul", "ReduceSum", "Cast", "Transpose"];

/** A small deterministic generator (an LCG), one per stream of choices. */
function lcg(seed: number): (n: number) => number {
  return (n) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
}

/** Buffered writer of text to a file. */
class TextSink {
  #file: Deno.FsFile;
  #text = "";
  #enc = new TextEncoder();
  bytes = 0;
  constructor(path: string) {
    this.#file = Deno.openSync(path, {
      write: true,
      create: true,
      truncate: true,
    });
  }
  add(s: string): void {
    this.#text += s;
    if (this.#text.length >= 1 << 20) this.flush();
  }
  flush(): void {
    const b = this.#enc.encode(this.#text);
    this.#text = "";
    this.bytes += b.length;
    for (let off = 0; off < b.length;) {
      off += this.#file.writeSync(b.subarray(off));
    }
  }
  close(): void {
    this.flush();
    this.#file.close();
  }
}

/** One device (one process) of a generated log. */
class Device {
  id = 1;
  /** Nanoseconds after the log's first second, kept below 2^53. */
  ns = 997_498_270;
  held: Array<{ id: number; ptr: number; size: number; hal: boolean }> = [];
  hal = 0;
  ptaUsed = 0;
  /** The HAL segment a `segment` log's blocks are carved from. */
  segment?: { id: number; ptr: number; size: number; hal: boolean };
  slots = 0;
  nextHal: number;
  pending: string[] = [];
  /** ids "at-free": MALLOC rows not yet written, by their block's ID. */
  unfreed = new Map<number, string>();
  constructor(readonly k: number, readonly pid: number) {
    this.nextHal = 0x124000000000 + k * 0x10000000000;
  }
  stamp(step: number): string {
    this.ns += step;
    return `17647530${String(this.ns).padStart(11, "0")}`;
  }
  where(): string {
    return `${this.pid},${this.pid},${this.k}`;
  }
}

/**
 * Writes a log of `shape` with about `rows` rows to `path`; `variant` makes
 * the next step of the same job (same op sequence but every 500th op renamed,
 * or every `variant`th, other sizes), or with "unrelated" a step of another
 * job (other ops in another order), for compare.
 *
 * @example
 * ```ts
 * import { SHAPES, writeShapedLog } from "./_log_shapes.ts";
 * const log = writeShapedLog("/tmp/a.csv", 100_000, SHAPES[0]);
 * console.log(log.bytes);
 * ```
 */
export function writeShapedLog(
  path: string,
  rows: number,
  shape: LogShape,
  variant: boolean | number | "unrelated" = false,
): WrittenLog {
  const unrelated = variant === "unrelated";
  const renameEvery = variant === true ? 500 : unrelated ? 0 : Number(variant);
  const sink = new TextSink(path);
  sink.add(HEADER);
  // What happens: the same in both steps of one job.
  const pick = lcg(unrelated ? 8 : 7);
  const value = lcg(variant ? 1234 : 99); // sizes and timing
  const shuffle = lcg(5);
  const devices = Array.from(
    { length: shape.devices },
    (_, k) => new Device(k, 3101864 + k),
  );
  const wanted = shape.stacks?.rows ?? rows;
  const perDevice = Math.ceil(wanted / shape.devices);
  const stepRows = shape.window === "whole"
    ? Number.MAX_SAFE_INTEGER // the first mark only, then those at the end
    : Math.ceil(perDevice / 6);
  const written = new Int32Array(shape.devices);
  const steps = new Int32Array(shape.devices).fill(-1);
  let total = 0, opCount = 0;

  const out = (d: Device, row: string) => {
    total++;
    written[d.k]++;
    if (shape.ids !== "shuffled") {
      sink.add(row);
      return;
    }
    // Rows leave in a random order from a window of 32: IDs out of order.
    d.pending.push(row);
    if (d.pending.length < 32) return;
    const i = shuffle(d.pending.length);
    sink.add(d.pending[i]);
    d.pending[i] = d.pending[d.pending.length - 1];
    d.pending.pop();
  };
  const plain = (d: Device, event: string, type: string, name: string) => {
    out(
      d,
      `${d.id++},${event},${type},${name},${
        d.stamp(1000 + value(3000))
      },${d.where()},N/A,,,\n`,
    );
  };
  const memory = (
    d: Device,
    event: "MALLOC" | "FREE",
    b: { id: number; ptr: number; size: number; hal: boolean },
  ) => {
    const p = formatPtr(b.ptr);
    if (!b.hal) d.ptaUsed += event === "MALLOC" ? b.size : -b.size;
    const attr = b.hal
      ? `{allocation_id:${b.id},addr:${p},size:${b.size}}`
      : `{allocation_id:${b.id},addr:${p},size:${b.size},total:2147483648,used:${d.ptaUsed}}`;
    // A job allocates from a few dozen call sites, its stacks repeat.
    const site = b.id % 37;
    const stacks = shape.stacks
      ? `${callStack("py", 4, site)},${callStack("c", 4, site)}`
      : ",";
    const row = `${event === "MALLOC" ? b.id : d.id++},${event},${
      b.hal ? "HAL" : "PTA"
    },N/A,${
      d.stamp(500 + value(1000))
    },${d.where()},${p},"${attr}",${stacks}\n`;
    if (shape.ids !== "at-free") return out(d, row);
    if (event === "MALLOC") {
      total++;
      written[d.k]++;
      d.unfreed.set(b.id, row);
      return;
    }
    const made = d.unfreed.get(b.id);
    if (made !== undefined) sink.add(made);
    d.unfreed.delete(b.id);
    out(d, row);
  };
  const malloc = (d: Device, hal: boolean) => {
    const size = hal ? 2097152 * (1 + value(8)) : 512 * (1 + value(8192));
    let ptr: number;
    if (shape.mix === "segment") {
      // 4 KiB slots of the device's segment, made on its first block.
      if (!d.segment) {
        d.segment = { id: d.id++, ptr: d.nextHal, size: 2 ** 40, hal: true };
        if (!shape.before) memory(d, "MALLOC", d.segment);
      }
      const b = {
        id: d.id++,
        // Slots in a scattered order, none taken twice (2^24 of them).
        ptr: d.segment.ptr +
          (Math.imul(++d.slots, 0x9e3779b1) >>> 8) * 4096,
        size: 512 * (1 + value(8)),
        hal: false,
      };
      memory(d, "MALLOC", b);
      d.held.push(b);
      return;
    }
    if (hal) {
      // Addresses never reused, as a caching allocator's HAL blocks.
      ptr = d.nextHal;
      d.nextHal += 0x4000000;
    } else ptr = 0x12c041400000 + pick(1 << 16) * 512;
    const b = { id: d.id++, ptr, size, hal };
    memory(d, "MALLOC", b);
    // Every 40th HAL block is never freed: the leaks.
    if (hal && ++d.hal % 40 === 0) return;
    d.held.push(b);
  };
  const freeOne = (d: Device) => {
    const i = pick(d.held.length);
    const b = d.held[i];
    d.held[i] = d.held[d.held.length - 1];
    d.held.pop();
    memory(d, "FREE", b);
  };
  const unit = (d: Device) => {
    if (written[d.k] >= (steps[d.k] + 1) * stepRows) {
      steps[d.k]++;
      plain(d, "MSTX", "Mark", '"step"');
    }
    let op = OPS[pick(OPS.length)];
    if (renameEvery && ++opCount % renameEvery === 0) {
      op = "torch._ops.aten.relu.default";
    }
    plain(d, "OP_LAUNCH", "ATEN_START", op);
    if (shape.mix === "memory") {
      // 4 MALLOC + about 4 FREE in 10 rows.
      for (let k = 0; k < 4; k++) malloc(d, true);
      while (d.held.length > (shape.held ?? 64)) freeOne(d);
    } else if (shape.mix === "segment") {
      for (let k = 0; k < 3; k++) malloc(d, false);
      plain(d, "KERNEL_LAUNCH", "KERNEL_LAUNCH", KERNELS[pick(KERNELS.length)]);
      while (d.held.length > (shape.held ?? 64)) freeOne(d);
    } else if (shape.mix === "pta") {
      for (let k = 0; k < 3; k++) malloc(d, false);
      if (pick(40) === 0) malloc(d, true);
      plain(d, "KERNEL_LAUNCH", "KERNEL_LAUNCH", KERNELS[pick(KERNELS.length)]);
      while (d.held.length > 48) freeOne(d);
    } else {
      for (let k = 1 + pick(4); k > 0; k--) {
        plain(d, "KERNEL_LAUNCH", "KERNEL_LAUNCH", KERNELS[pick(6)]);
      }
      if (pick(4) === 0) malloc(d, pick(10) === 0);
      while (d.held.length > 16) freeOne(d);
    }
    plain(d, "OP_LAUNCH", "ATEN_END", op);
  };

  if (shape.layout === "sequential") {
    for (const d of devices) while (written[d.k] < perDevice) unit(d);
  } else {
    while (total < wanted) unit(devices[pick(devices.length)]);
  }
  if (shape.window === "whole") {
    for (const d of devices) {
      for (let k = 0; k < 2; k++) plain(d, "MSTX", "Mark", '"step"');
    }
  }
  for (const d of devices) {
    while (d.held.length) freeOne(d);
    // Its blocks first, as an allocator gives a segment back.
    if (d.segment && !shape.before) memory(d, "FREE", d.segment);
    for (const row of d.pending) sink.add(row);
    for (const row of d.unfreed.values()) sink.add(row);
  }
  sink.close();
  return { path, rows: total, bytes: sink.bytes, copies: 1 };
}

/**
 * Writes the data rows of the real log `fixture` again and again until
 * about `rows` rows (or `copies` times), each copy's IDs and timestamps
 * moved past the previous copy's, so that marks, windows and op sequences
 * repeat as in a long job.
 *
 * @example
 * ```ts
 * import { repeatFixture } from "./_log_shapes.ts";
 * repeatFixture("fixture.csv", "/tmp/big.csv", 1_000_000);
 * ```
 */
export function repeatFixture(
  fixture: string,
  path: string,
  rows: number,
  copies = Infinity,
): WrittenLog {
  const [header, ...lines] = Deno.readTextFileSync(fixture).split("\n")
    .filter((l) => l.length);
  const cells = lines.map((l) => {
    const cut1 = l.indexOf(","), at = nthComma(l, 4);
    const tsEnd = l.indexOf(",", at + 1);
    return {
      id: Number(l.slice(0, cut1)),
      mid: l.slice(cut1, at + 1),
      ts: BigInt(l.slice(at + 1, tsEnd)),
      rest: l.slice(tsEnd),
    };
  });
  const maxId = Math.max(...cells.map((c) => c.id)) + 1;
  const span = cells.reduce((m, c) => c.ts > m ? c.ts : m, 0n) -
    cells.reduce((m, c) => c.ts < m ? c.ts : m, cells[0].ts) + 1000n;
  const sink = new TextSink(path);
  sink.add(header + "\n");
  let total = 0, copy = 0;
  // `copies` when given (both sides of a pair alike), else up to `rows`.
  for (; copies === Infinity ? total < rows : copy < copies; copy++) {
    const shift = BigInt(copy) * span;
    for (const c of cells) {
      sink.add(`${c.id + copy * maxId}${c.mid}${c.ts + shift}${c.rest}\n`);
    }
    total += cells.length;
  }
  sink.close();
  return { path, rows: total, bytes: sink.bytes, copies: copy };
}

function nthComma(s: string, n: number): number {
  let i = -1;
  for (let k = 0; k < n; k++) i = s.indexOf(",", i + 1);
  return i;
}
