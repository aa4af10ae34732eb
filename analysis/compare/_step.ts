/**
 * One side of `compare`: the rows of an msMemScope event log that the
 * comparison needs (the op or kernel rows of the chosen level and the
 * framework pool's memory rows), kept per device in the real tool's order.
 *
 * @module
 */
import {
  type MemscopeColumn,
  type MemscopeRow,
  openEventLog,
  readMemscopeBytes,
  readMemscopeCsv,
} from "../memscope_csv/mod.ts";

/** `--level` of compare: ops (ATEN_END, ATB_END) or kernel launches. */
export type CompareLevel = "op" | "kernel";

/** Event Types of the rows each level aligns. */
export const LEVEL_EVENT_TYPES: Record<CompareLevel, readonly string[]> = {
  op: ["ATEN_END", "ATB_END"],
  kernel: ["KERNEL_LAUNCH"],
};

/** Framework pools whose rows give an op its memory (PTA_WORKSPACE is not). */
export type Framework = "PTA" | "MINDSPORE";

const ALIGNED = 0, PTA = 1, MINDSPORE = 2;
const KIND: Record<Framework, number> = { PTA, MINDSPORE };

/**
 * The aligned rows of one device in order, each with its memory; names and
 * events are indexes into the log's {@link StepLog.texts}.
 */
export interface AlignedRows {
  names: number[];
  events: number[];
  /** Attr `size` of the first framework row at or after each aligned row. */
  memory: number[];
}

/**
 * The rows of one device that compare keeps, as columns: the aligned ops or
 * kernels and the framework pools' memory rows.
 */
export class DeviceRows {
  length = 0;
  /** Nanoseconds since the log's first second: exact for 104 days. */
  #time = new Float64Array(1024);
  #id = new Float64Array(1024);
  #size = new Float64Array(1024);
  #kind = new Uint8Array(1024);
  #name = new Int32Array(1024);
  #event = new Int32Array(1024);

  /** Appends a row; `name` and `event` are text indexes, -1 for memory rows. */
  push(
    time: number,
    id: number,
    kind: number,
    size: number,
    name: number,
    event: number,
  ): void {
    if (this.length === this.#time.length) this.#grow();
    const i = this.length++;
    this.#time[i] = time;
    this.#id[i] = id;
    this.#kind[i] = kind;
    this.#size[i] = size;
    this.#name[i] = name;
    this.#event[i] = event;
  }

  #grow(): void {
    const n = this.length * 2;
    const t = new Float64Array(n), id = new Float64Array(n);
    const size = new Float64Array(n), kind = new Uint8Array(n);
    const name = new Int32Array(n), event = new Int32Array(n);
    t.set(this.#time), id.set(this.#id), size.set(this.#size);
    kind.set(this.#kind), name.set(this.#name), event.set(this.#event);
    this.#time = t, this.#id = id, this.#size = size, this.#kind = kind;
    this.#name = name, this.#event = event;
  }

  /**
   * Row positions in time order, then ID: msMemScope's compare sorts each
   * device's rows by Timestamp(ns) (IDs repeat when two processes share a
   * file); ID settles ties so the result does not depend on the sort.
   */
  #order(): Uint32Array {
    const order = new Uint32Array(this.length);
    const t = this.#time, id = this.#id;
    let sorted = true;
    for (let i = 0; i < order.length; i++) {
      order[i] = i;
      // A log written as things happened is in order already: no sort.
      if (
        i > 0 && (t[i - 1] > t[i] || (t[i - 1] === t[i] && id[i - 1] > id[i]))
      ) {
        sorted = false;
      }
    }
    if (sorted) return order;
    return order.sort((a, b) => t[a] - t[b] || id[a] - id[b]);
  }

  /**
   * The aligned rows in order, each with the Attr `size` of the first
   * `framework` row at or after it (0 when there is none), as the real tool
   * reads an op's memory.
   */
  aligned(framework: Framework | undefined): AlignedRows {
    const order = this.#order();
    const pool = framework === undefined ? -1 : KIND[framework];
    const names: number[] = [], events: number[] = [], memory: number[] = [];
    let next = 0;
    for (let r = order.length - 1; r >= 0; r--) {
      const i = order[r];
      const kind = this.#kind[i];
      if (kind === pool) next = this.#size[i];
      else if (kind === ALIGNED) {
        names.push(this.#name[i]);
        events.push(this.#event[i]);
        memory.push(next);
      }
    }
    return {
      names: names.reverse(),
      events: events.reverse(),
      memory: memory.reverse(),
    };
  }
}

/** What compare kept of one event log. */
export interface StepLog {
  /** Shown in messages: the path as given. */
  label: string;
  /** The levels whose rows were kept. */
  levels: readonly CompareLevel[];
  /** Kept rows per numeric device. */
  devices: Map<number, DeviceRows>;
  /** Names and events of aligned rows, each text once. */
  texts: string[];
  /** Framework pools seen, in the order their first row came. */
  frameworks: Framework[];
  /** Aligned rows (ops or kernels) on numeric devices. */
  aligned: number;
  /** Rows of any kind on numeric devices. */
  deviceRows: number;
}

/**
 * Columns compare reads; the reader reports any that is missing. The native
 * comparison (ffi/daemon/compare.c) reads them in this order.
 */
export const COMPARE_COLUMNS: readonly MemscopeColumn[] = [
  "ID",
  "Event",
  "Event Type",
  "Name",
  "Timestamp(ns)",
  "Device Id",
  "Attr",
];

class Collector {
  readonly log: StepLog;
  #types: Set<string>;
  #deviceText = "";
  #rows: DeviceRows | undefined;
  #firstSecond = NaN;
  #split = new Float64Array(2);
  // Op names repeat: keeping each once spares memory and the collector.
  #textIds = new Map<string, number>();

  constructor(label: string, levels: readonly CompareLevel[]) {
    this.log = {
      label,
      levels,
      devices: new Map(),
      texts: [],
      frameworks: [],
      aligned: 0,
      deviceRows: 0,
    };
    this.#types = new Set(levels.flatMap((l) => LEVEL_EVENT_TYPES[l]));
  }

  add = (row: MemscopeRow): void => {
    const type = row.eventType;
    const pool = type === "PTA" || type === "MINDSPORE" ? type : undefined;
    const frameworks = this.log.frameworks;
    if (pool !== undefined && !frameworks.includes(pool)) frameworks.push(pool);
    const deviceText = row.device;
    if (deviceText !== this.#deviceText) {
      this.#deviceText = deviceText;
      this.#rows = this.#device(deviceText);
    }
    const rows = this.#rows;
    if (rows === undefined) return;
    this.log.deviceRows++;
    if (pool === undefined && !this.#types.has(type)) return;
    const time = this.#time(row);
    if (pool === undefined) {
      this.log.aligned++;
      const name = this.#text(row.nameInterned);
      const event = this.#text(row.event);
      rows.push(time, row.id, ALIGNED, 0, name, event);
    } else {
      // No size reads as 0, as the real tool reads it.
      rows.push(time, row.id, KIND[pool], row.size ?? 0, -1, -1);
    }
  };

  #text(text: string): number {
    let id = this.#textIds.get(text);
    if (id === undefined) {
      this.#textIds.set(text, id = this.log.texts.length);
      this.log.texts.push(text);
    }
    return id;
  }

  /** The rows of a numeric Device Id; undefined for N/A, cpu, host. */
  #device(text: string): DeviceRows | undefined {
    if (!/^\d+$/.test(text)) return undefined;
    const device = Number(text);
    let rows = this.log.devices.get(device);
    if (rows === undefined) {
      this.log.devices.set(device, rows = new DeviceRows());
    }
    return rows;
  }

  /**
   * Timestamp(ns) as nanoseconds since the log's first second; Infinity
   * when it is not all digits. Read from the bytes: a string per row was a
   * seventh of the time on a log of PTA rows.
   */
  #time(row: MemscopeRow): number {
    const split = this.#split;
    if (!row.timestampSplit(split)) return Infinity;
    if (Number.isNaN(this.#firstSecond)) this.#firstSecond = split[0];
    return (split[0] - this.#firstSecond) * 1e9 + split[1];
  }

  finish(): StepLog {
    return this.log;
  }
}

/**
 * Reads the event log at `path`, keeping what compare needs at `levels`.
 * Throws `MemscopeCsvError` with a one-line message for a file that is
 * missing, not a regular file (a directory, a FIFO), or not an msMemScope
 * event log.
 *
 * @example
 * ```ts
 * import { readStep } from "./mod.ts";
 * const base = await readStep("step1/memscope_dump.csv", ["op"]);
 * console.log(base.aligned, [...base.devices.keys()]);
 * ```
 */
export async function readStep(
  path: string,
  levels: readonly CompareLevel[],
): Promise<StepLog> {
  const collector = new Collector(path, levels);
  using log = await openEventLog(path);
  await readMemscopeCsv(log, collector.add, { columns: COMPARE_COLUMNS });
  return collector.finish();
}

/**
 * Same as {@link readStep} over an event log already in memory.
 *
 * @example
 * ```ts
 * import { stepFromBytes } from "./mod.ts";
 * const csv = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id," +
 *   "Device Id,Ptr,Attr\n3,OP_LAUNCH,ATEN_END,aten.t,5,1,1,0,N/A,\n";
 * const bytes = new TextEncoder().encode(csv);
 * stepFromBytes(bytes, { label: "a.csv", levels: ["op"] }).aligned; // 1
 * ```
 */
export function stepFromBytes(
  bytes: Uint8Array,
  options: { label: string; levels: readonly CompareLevel[] },
): StepLog {
  const { label, levels } = options;
  const collector = new Collector(label, levels);
  readMemscopeBytes(bytes, collector.add, { columns: COMPARE_COLUMNS, label });
  return collector.finish();
}
