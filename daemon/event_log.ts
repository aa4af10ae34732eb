/**
 * The daemon's event log: every event of every traced process, as
 * msMemScope's CSV, one file per device
 * (`OUT/device_{N}/memscope_dump_{YYYYmmddHHMMSS}.csv`). Rows are buffered
 * while the pump drains a round and written at its end, so a job that dies
 * or a daemon that is stopped leaves complete lines for every event read.
 *
 * IDs come from one counter for the whole daemon: they increase within each
 * process, as the format asks, and never repeat within a file, so rows of
 * two jobs sharing a device still sort unambiguously.
 *
 * A log file is created under a name no file had (exclusive create: a
 * second daemon on the same output directory within the same second takes
 * the next second's name) and is only ever appended to. A write error never
 * stops the daemon: the rows are kept in memory and written when the file
 * can be written again (see {@linkcode RowFile}).
 *
 * Rows without a device (process start and exit, host allocations) go to
 * the files of the devices their process uses; until it has used one they
 * wait, and a process that never touches a device has them written to
 * `OUT/host/`.
 *
 * @module
 */
import {
  type AllocEvent,
  type FreeEvent,
  POOL_CODE,
  type TracedEvent,
} from "../analysis/events.ts";
import {
  ascii,
  EVENT_LOG_HEADER,
  RowWriter,
  writeEventRow,
} from "../analysis/memscope_csv/mod.ts";
import { fileStamp } from "../analysis/files.ts";
import { PoolUsage } from "../analysis/pool_usage.ts";
import { IoProblems } from "../watch/io_problems.ts";
import { RowFile } from "../watch/row_file.ts";
import {
  MEMORY_ROW_ROOM,
  type MemoryRow,
  writeMemoryRow,
} from "../ffi/bindings.ts";

/**
 * What the name of every event log file matches, and of the directories
 * under OUT that hold them.
 *
 * @example
 * ```ts
 * import { EVENT_LOG_NAMES } from "./event_log.ts";
 * EVENT_LOG_NAMES.file.test("memscope_dump_20260102030405.csv"); // true
 * EVENT_LOG_NAMES.dir.test("device_0"); // true
 * ```
 */
export const EVENT_LOG_NAMES = {
  file: /^memscope_dump_\d{14}\.csv$/,
  dir: /^(device_\d+|host)$/,
} as const;

const HOST = -1;
// Rows are written once this many bytes wait: few writes, a small buffer.
const WRITE_AT_BYTES = 1 << 20;

interface LogFile {
  out: RowFile;
  /** Rows not yet written. */
  pending: RowWriter;
}

/** Where an {@linkcode EventLog} reports what it could not write, and who hears of new files. */
export interface EventLogOptions {
  problems?: IoProblems;
  /** Passed to each file: told its size after each write of whole rows. */
  onCommitted?: (path: string, size: number) => void;
}

interface ProcessRoute {
  devices: number[];
  /** Rows waiting for the process's first device. */
  waiting: Uint8Array[];
  /** How many of them are in `host/` already (copied for a snapshot). */
  inHost: number;
}

/**
 * Fills `row` with what the native writer needs for the row of `e` (an
 * allocation, or a free that succeeded), `id` its ID and `used` the bytes
 * live after it; returns `row`.
 *
 * @example
 * ```ts
 * import { fillMemoryRow } from "./event_log.ts";
 * import type { MemoryRow } from "../ffi/bindings.ts";
 * const row = fillMemoryRow({} as MemoryRow, {
 *   kind: "alloc", pid: 1, tid: 1, ts: 5, device: 0, addr: 0x1000,
 *   size: 64, pool: "HAL", result: 0, allocationId: 1,
 * }, 1, 64);
 * row.event; // 0 (MALLOC)
 * ```
 */
export function fillMemoryRow(
  row: MemoryRow,
  e: AllocEvent | FreeEvent,
  id: number,
  used: number,
): MemoryRow {
  row.event = e.kind === "free" ? 1 : e.result === 0 ? 0 : 2;
  row.pool = POOL_CODE[e.pool];
  row.id = id;
  row.ts = e.ts;
  row.pid = e.pid;
  row.tid = e.tid;
  row.device = e.device;
  row.addr = e.addr;
  row.allocationId = e.allocationId;
  row.size = e.size;
  row.used = used;
  row.result = e.result;
  return row;
}

// An allocation a framework labelled (op, owner, stack): written by the
// TypeScript row writer, which has those columns.
function labelled(e: AllocEvent | FreeEvent): boolean {
  return e.kind === "alloc" &&
    (e.op !== undefined || e.owner !== undefined ||
      e.pythonStack !== undefined);
}

/** Writes the event log of one daemon. */
export class EventLog {
  readonly outputDir: string;
  readonly startedAt: Date;
  readonly problems: IoProblems;
  #onCommitted?: (path: string, size: number) => void;
  #files = new Map<number, LogFile>();
  #closed: Array<{ device: number | "host"; path: string }> = [];
  /** The first device each process used (its log holds all its host rows). */
  #firstDevice = new Map<number, number>();
  #routes = new Map<number, ProcessRoute>();
  #usage = new PoolUsage();
  #nextId = 1;
  #scratch = new RowWriter(1 << 12);
  #memoryRow: MemoryRow = {
    event: 0,
    pool: 0,
    id: 0,
    ts: 0,
    pid: 0,
    tid: 0,
    device: 0,
    addr: 0,
    allocationId: 0,
    size: 0,
    used: 0,
    result: 0,
  };

  /** A log under `outputDir`, its files named after `startedAt`. */
  constructor(
    outputDir: string,
    startedAt = new Date(),
    options: EventLogOptions = {},
  ) {
    this.outputDir = outputDir;
    this.startedAt = startedAt;
    this.problems = options.problems ?? new IoProblems();
    this.#onCommitted = options.onCommitted;
  }

  /** Takes one event (an {@linkcode EventListener}). */
  readonly onEvent = (e: TracedEvent): void => {
    const used = this.#account(e);
    const route = this.#route(e.pid);
    if (e.device >= 0) {
      if (!route.devices.includes(e.device)) {
        this.#adopt(route, e.device, e.pid);
      }
      const f = this.#fileOf(e.device);
      this.#row(f.pending, e, used);
      if (f.pending.length >= WRITE_AT_BYTES) this.#write(f);
    } else {
      // Rare (process start and exit, host blocks): written once, copied.
      const w = this.#scratch;
      w.clear();
      if (!this.#row(w, e, used)) return;
      if (route.devices.length === 0) route.waiting.push(w.view().slice());
      for (const d of route.devices) this.#fileOf(d).pending.bytes(w.view());
    }
    if (e.kind === "proc_exit") this.#settle(e.pid);
  };

  /** The log file of each device created so far. */
  files(): Array<{ device: number | "host"; path: string }> {
    const open = [...this.#files].filter(([, f]) => f.out.created).map((
      [device, f],
    ) => ({
      device: device === HOST ? "host" as const : device,
      path: f.out.path,
    }));
    return [...this.#closed, ...open];
  }

  /**
   * The path of the log that holds `pid`'s rows of `device`, if one was
   * created: host rows (device -1) are in each of the process's device
   * logs, the first one named here; a process with no device yet has its
   * waiting host rows copied to `host/` first (each row once) and `host/`'s
   * path is returned. Its buffered rows are written.
   */
  pathOf(pid: number, device: number): string | undefined {
    if (device === HOST) {
      // A process that is done (or unknown) has no route: its host rows
      // went to host/ when it ended.
      const route = this.#routes.get(pid);
      if (route?.devices.length) device = route.devices[0];
      else if (route) {
        // Copied, not moved: they still go to the device the process
        // takes up later, as host rows go to each of its devices.
        const f = this.#fileOf(HOST);
        for (const row of route.waiting.slice(route.inHost)) {
          f.pending.bytes(row);
        }
        route.inHost = route.waiting.length;
      }
    }
    const f = this.#files.get(device);
    if (!f) return undefined;
    this.#write(f);
    return f.out.created ? f.out.path : undefined;
  }

  /**
   * The logs that hold `pid`'s memory rows (buffered rows written), each
   * saying whether its host rows are to be read: host rows are copied into
   * each device log of a process from the moment it takes that device up,
   * so the log of the first device it used holds them all and the others a
   * part of them (the process's host/ log before it used a device).
   */
  logsOf(
    pid: number,
  ): Array<{ device: number | "host"; path: string; hostRows: boolean }> {
    const first = this.#routes.get(pid)?.devices[0] ??
      this.#firstDevice.get(pid);
    // Rows still waiting for a first device are copied to host/ here.
    if (first === undefined) this.pathOf(pid, HOST);
    this.flush();
    const files = this.files();
    const home = first ?? "host";
    const hostPath = files.findLast((f) => f.device === home)?.path;
    return files
      .filter((f) => f.device !== "host" || f.path === hostPath)
      .map((f) => ({ ...f, hostRows: f.path === hostPath }));
  }

  /** Writes every buffered row (and tries files that failed again). */
  flush(): void {
    for (const f of this.#files.values()) {
      this.#write(f);
      f.out.retry();
    }
  }

  /** Flushes and closes every file; rows still waiting go to `host/`. */
  close(): void {
    for (const pid of this.#routes.keys()) this.#settle(pid);
    this.flush();
    for (const f of this.#files.values()) f.out.close();
    // A closed log still tells where its rows are (run's summary, the bench).
    this.#closed.push(...this.files());
    this.#files.clear();
  }

  #row(w: RowWriter, e: TracedEvent, used: number): boolean {
    if ((e.kind === "alloc" || e.kind === "free") && !labelled(e)) {
      // Most of the log: written natively, the same bytes as writeEventRow.
      if (e.kind === "free" && e.result !== 0) return false; // no row, as there
      const r = fillMemoryRow(this.#memoryRow, e, this.#nextId, used);
      w.length = writeMemoryRow(w.room(MEMORY_ROW_ROOM), w.length, r);
    } else if (!writeEventRow(w, this.#nextId, e, used)) {
      return false;
    }
    this.#nextId++;
    return true;
  }

  #write(f: LogFile): void {
    f.out.write(f.pending.view());
    f.pending.clear();
  }

  // Bytes live on the event's device and pool after it.
  #account(e: TracedEvent): number {
    if (e.kind !== "alloc" && e.kind !== "free") return 0;
    const delta = e.result !== 0 ? 0 : e.kind === "alloc" ? e.size : -e.size;
    return this.#usage.add(e.device, POOL_CODE[e.pool], delta);
  }

  #route(pid: number): ProcessRoute {
    let route = this.#routes.get(pid);
    if (!route) {
      this.#routes.set(pid, route = { devices: [], waiting: [], inHost: 0 });
    }
    return route;
  }

  #adopt(route: ProcessRoute, device: number, pid: number): void {
    // Kept past the process's end, for logsOf: a pid is a few bytes.
    if (!route.devices.length) this.#firstDevice.set(pid, device);
    route.devices.push(device);
    const f = this.#fileOf(device);
    for (const row of route.waiting) f.pending.bytes(row);
    route.waiting.length = 0;
    route.inHost = 0;
  }

  // A process that is done: rows still waiting for a device go to host/.
  #settle(pid: number): void {
    const route = this.#routes.get(pid);
    if (!route) return;
    if (route.waiting.length > route.inHost) {
      const f = this.#fileOf(HOST);
      for (const row of route.waiting.slice(route.inHost)) f.pending.bytes(row);
    }
    this.#routes.delete(pid);
  }

  #fileOf(device: number): LogFile {
    let f = this.#files.get(device);
    if (f) return f;
    const name = device === HOST ? "host" : `device_${device}`;
    const started = this.startedAt.getTime();
    const out = new RowFile({
      dir: `${this.outputDir}/${name}`,
      // A name taken (another daemon's log of the same second): the next second's.
      name: (i) =>
        `memscope_dump_${fileStamp(new Date(started + i * 1000))}.csv`,
      header: ascii(EVENT_LOG_HEADER + "\n"),
      problems: this.problems,
      onCommitted: this.#onCommitted,
    });
    f = { out, pending: new RowWriter(WRITE_AT_BYTES + (1 << 16)) };
    this.#files.set(device, f);
    return f;
  }
}
