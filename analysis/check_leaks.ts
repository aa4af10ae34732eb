/**
 * Offline leak check of an msMemScope event log between mstx marks, as
 * `msmemscope.check_leaks(input_path, mstx_info, start_index)` does it (SPEC
 * section 3): per device, with the marks A, B, C named `mstxInfo` starting at
 * `startIndex`, a HAL block allocated between A and B and not freed by C is a
 * leak. Same rule and same lines as the real tool, in linear time and
 * bounded memory; the result is also given as data.
 *
 * @example
 * ```ts
 * import { checkLeaksFile, formatCheckLeaks } from "./check_leaks.ts";
 * const result = await checkLeaksFile("memscope_dump.csv", { mstxInfo: "step" });
 * for (const line of formatCheckLeaks(result)) console.log(line);
 * ```
 *
 * @module
 */
import {
  FREE,
  LeakRows,
  MALLOC,
  replayWindow,
  type Window,
} from "./_leak_rows.ts";
import {
  type MemscopeColumn,
  type MemscopeRow,
  readMemscopeCsv,
  readMemscopeRowsAt,
} from "./memscope_csv.ts";

/** Memory pools an Event Type can name (SPEC section 2). */
export const MEMORY_POOLS = [
  "HAL",
  "PTA",
  "ATB",
  "MINDSPORE",
  "HOST",
  "HOST_PINNED",
] as const;

/** Options of {@link checkLeaksFile}. */
export interface CheckLeaksOptions {
  /** Name of the mstx marks that delimit the window (`mstx_info`). */
  mstxInfo: string;
  /** Which matching mark is A (`start_index`); default 0. */
  startIndex?: number;
  /** Pool whose MALLOC/FREE rows count; default HAL, as the real tool. */
  eventType?: string;
  /**
   * Most memory rows kept in memory at once (about 41 bytes each); past it
   * the file is read again, a share of the addresses per pass. Default 2M.
   */
  rowBudget?: number;
}

/** One block allocated between A and B and still not freed at C. */
export interface Leak {
  /** ID of the MALLOC row. */
  id: number;
  /** Ptr as the file writes it. */
  ptr: string;
  bytes: number;
  /** bytes / 2^20, as the real tool prints it. */
  mb: number;
  timestamp: string;
  pid: number;
  tid: number;
  /** Attr `owner` (`A@B@C`) when the row has one. */
  owner?: string;
  /** Line of the MALLOC row in the file. */
  line: number;
}

/** What was found on one device. */
export interface DeviceLeaks {
  /** Device Id as written. */
  device: string;
  /**
   * `leaks` or `clean` when the window was checked; `too-few-marks` (fewer
   * than 3), `start-out-of-bounds` (not 3 marks from startIndex on).
   */
  status: "leaks" | "clean" | "too-few-marks" | "start-out-of-bounds";
  /** Marks named mstxInfo on this device. */
  marks: number;
  /** IDs of A, B and C when the window was checked. */
  window?: Window;
  leaks: Leak[];
  leakedBytes: number;
}

/** The whole check. */
export interface CheckLeaksResult {
  input: string;
  mstxInfo: string;
  startIndex: number;
  eventType: string;
  /** Devices in order: numbers ascending, then names. */
  devices: DeviceLeaks[];
  leakCount: number;
  leakedBytes: number;
  /** Data rows and bytes read (first pass). */
  rows: number;
  bytes: number;
}

/** Options that cannot be used, worded for a person. */
export class CheckLeaksError extends Error {
  override name = "CheckLeaksError";
}

const COLUMNS: readonly MemscopeColumn[] = [
  "ID",
  "Event",
  "Event Type",
  "Name",
  "Device Id",
  "Ptr",
  "Attr",
];

function deviceOrder(a: string, b: string): number {
  const x = /^\d+$/.test(a), y = /^\d+$/.test(b);
  if (x && y) return Number(a) - Number(b);
  if (x !== y) return x ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Mixes a Ptr key into [0, parts) to split the rows over several passes. */
function partOf(key: number, parts: number): number {
  if (parts === 1) return 0;
  // Addresses are aligned: mix every bit down before taking the remainder.
  let h = (key >>> 0) ^ Math.imul(Math.floor(key / 4294967296), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return ((h ^ (h >>> 16)) >>> 0) % parts;
}

function checkOptions(options: CheckLeaksOptions) {
  const startIndex = options.startIndex ?? 0;
  const eventType = (options.eventType ?? "HAL").toUpperCase();
  if (typeof options.mstxInfo !== "string" || options.mstxInfo === "") {
    throw new CheckLeaksError(
      "Missing mstx message: pass the text of the mstx marks that delimit the window (mstx_info), e.g. step",
    );
  }
  if (!Number.isSafeInteger(startIndex) || startIndex < 0) {
    throw new CheckLeaksError(
      `Invalid start index: ${startIndex}; use a whole number from 0 (the first matching mark)`,
    );
  }
  if (!(MEMORY_POOLS as readonly string[]).includes(eventType)) {
    throw new CheckLeaksError(
      `Unknown event type: ${eventType}; use one of ${MEMORY_POOLS.join(", ")}`,
    );
  }
  return { startIndex, eventType };
}

async function checkFile(path: string): Promise<void> {
  const what = "pass the path of an msMemScope event log (memscope_dump_*.csv)";
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new CheckLeaksError(`Cannot read ${path}: no such file; ${what}`);
    }
    const why = (e as Error).message.split("\n")[0];
    throw new CheckLeaksError(`Cannot read ${path}: ${why}; ${what}`);
  }
  if (!info.isFile) {
    throw new CheckLeaksError(`Cannot read ${path}: not a file; ${what}`);
  }
}

/**
 * Checks the event log at `path` for leaks between the marks named
 * `mstxInfo`. Reads the file once when its memory rows fit `rowBudget`
 * (again, in parts, when not), then once more around the leaked rows only.
 * Throws {@link CheckLeaksError} for bad options and `MemscopeCsvError` for
 * a file that is not an msMemScope log.
 *
 * @example
 * ```ts
 * import { checkLeaksFile } from "./check_leaks.ts";
 * const r = await checkLeaksFile("memscope_dump.csv", {
 *   mstxInfo: "step",
 *   startIndex: 1,
 * });
 * console.log(r.leakCount, r.leakedBytes);
 * ```
 */
export async function checkLeaksFile(
  path: string,
  options: CheckLeaksOptions,
): Promise<CheckLeaksResult> {
  const { startIndex, eventType } = checkOptions(options);
  await checkFile(path);
  const { mstxInfo } = options;
  const budget = options.rowBudget ?? 2_000_000;
  const devices = new Map<string, number>();
  const names: string[] = [];
  const marks: number[][] = [];
  const bigPtrs = new Map<bigint, number>();
  const deviceIndex = (d: string) => {
    let k = devices.get(d);
    if (k === undefined) {
      k = names.length;
      devices.set(d, k);
      names.push(d);
      marks.push([]);
    }
    return k;
  };
  const ptrKey = (row: MemscopeRow) => {
    const p = row.ptr;
    if (typeof p === "number") return p;
    if (p === undefined) return NaN;
    let k = bigPtrs.get(p);
    if (k === undefined) bigPtrs.set(p, k = -1 - bigPtrs.size);
    return k;
  };

  // Pass 1: marks and devices; the pool's memory rows too while they fit.
  // Only MALLOC/MSTX/FREE rows of the pool or of type Mark get this far.
  const only = { Event: "MF", "Event Type": `${eventType[0]}M` };
  let kept: LeakRows | undefined = new LeakRows(budget);
  const summary = await readMemscopeCsv(path, (row) => {
    const ev = row.event;
    const memory = ev === "MALLOC" || ev === "FREE";
    if (memory ? row.eventType !== eventType : ev !== "MSTX") return;
    const d = row.device;
    if (d === "N/A" || d === "") return;
    const k = deviceIndex(d);
    const id = row.id;
    if (Number.isNaN(id)) return;
    if (memory) {
      if (kept === undefined) return;
      const ok = ev === "MALLOC"
        ? kept.push(
          MALLOC,
          k,
          id,
          ptrKey(row),
          row.size ?? 0,
          row.offset,
          row.line,
        )
        : kept.push(FREE, k, id, ptrKey(row), 0, row.offset, row.line);
      if (!ok) kept = undefined;
    } else if (row.eventType === "Mark" && row.nameEquals(mstxInfo)) {
      marks[k].push(id);
    }
  }, { columns: COLUMNS, startsWith: only });

  const windows = new Map<number, Window>();
  const results = new Map<number, DeviceLeaks>();
  names.forEach((device, k) => {
    const m = marks[k].sort((x, y) => x - y);
    const base = { device, marks: m.length, leaks: [], leakedBytes: 0 };
    if (m.length < 3) {
      results.set(k, { ...base, status: "too-few-marks" });
    } else if (startIndex + 2 >= m.length) {
      results.set(k, { ...base, status: "start-out-of-bounds" });
    } else {
      const w = {
        a: m[startIndex],
        b: m[startIndex + 1],
        c: m[startIndex + 2],
      };
      windows.set(k, w);
      results.set(k, { ...base, status: "clean", window: w });
    }
  });

  // Leaks as (device, row index) over however many passes it took.
  const found: Array<{ device: number; rows: LeakRows; at: number[] }> = [];
  if (windows.size && kept !== undefined) {
    for (const [k, w] of windows) {
      found.push({ device: k, rows: kept, at: replayWindow(kept, k, w) });
    }
  } else if (windows.size) {
    // Too many memory rows for one pass: keep only rows inside a window,
    // and only the Ptrs of one part per pass (a Ptr's rows never interact
    // with another Ptr's), doubling the parts until a part fits.
    kept = undefined;
    for (let parts = 1, part = 0; part < parts;) {
      // One address alone over the budget cannot be split: take it whole.
      const rows = new LeakRows(parts < 4096 ? budget : Infinity);
      let fits = true;
      await readMemscopeCsv(path, (row) => {
        if (!fits) return;
        const ev = row.event;
        if (ev !== "MALLOC" && ev !== "FREE") return;
        if (row.eventType !== eventType) return;
        const k = devices.get(row.device);
        const w = k === undefined ? undefined : windows.get(k);
        if (w === undefined) return;
        const id = row.id;
        if (!(id >= w.a && id <= (ev === "MALLOC" ? w.b : w.c))) return;
        const key = ptrKey(row);
        if (partOf(key, parts) !== part) return;
        fits = ev === "MALLOC"
          ? rows.push(MALLOC, k!, id, key, row.size ?? 0, row.offset, row.line)
          : rows.push(FREE, k!, id, key, 0, row.offset, row.line);
      }, {
        columns: COLUMNS,
        startsWith: { Event: "MF", "Event Type": eventType[0] },
      });
      if (!fits) {
        parts *= 2;
        part = 0;
        found.length = 0;
        continue;
      }
      for (const [k, w] of windows) {
        found.push({ device: k, rows, at: replayWindow(rows, k, w) });
      }
      part++;
    }
  }

  // Back to the leaked rows for what the typed arrays do not hold.
  const byOffset = new Map<number, Leak>();
  for (const { device, rows, at } of found) {
    const r = results.get(device)!;
    for (const i of at) {
      const bytes = rows.size[i];
      const leak: Leak = {
        id: rows.id[i],
        ptr: "",
        bytes,
        mb: bytes / 1048576,
        timestamp: "",
        pid: NaN,
        tid: NaN,
        line: rows.line[i],
      };
      r.leaks.push(leak);
      r.leakedBytes += bytes;
      byOffset.set(rows.offset[i], leak);
    }
  }
  for (const r of results.values()) {
    if (found.length > 1) r.leaks.sort((x, y) => x.id - y.id);
    if (r.leaks.length) r.status = "leaks";
  }
  if (byOffset.size) {
    await readMemscopeRowsAt(path, [...byOffset.keys()], (row) => {
      const leak = byOffset.get(row.offset);
      if (leak === undefined) return;
      leak.ptr = row.ptrText;
      leak.timestamp = row.timestamp;
      leak.pid = row.pid;
      leak.tid = row.tid;
      const owner = row.owner;
      if (owner !== undefined) leak.owner = owner;
    });
  }

  const ordered = [...results.values()].sort((x, y) =>
    deviceOrder(x.device, y.device)
  );
  return {
    input: path,
    mstxInfo,
    startIndex,
    eventType,
    devices: ordered,
    leakCount: ordered.reduce((n, d) => n + d.leaks.length, 0),
    leakedBytes: ordered.reduce((n, d) => n + d.leakedBytes, 0),
    rows: summary.rows,
    bytes: summary.bytes,
  };
}

/**
 * A float as Python's `str()` writes it (`18.0`, `1.9073486328125e-06`): the
 * real tool is Python and prints sizes in MB that way.
 */
export function pythonFloat(x: number): string {
  if (!Number.isFinite(x)) return x > 0 ? "inf" : x < 0 ? "-inf" : "nan";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const [mant, expText] = x.toExponential().split("e");
  const exp = Number(expText);
  if (exp < -4 || exp >= 16) {
    const sign = exp < 0 ? "-" : "+";
    return `${mant}e${sign}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  const s = String(x);
  return s.includes(".") || s.includes("e") ? s : `${s}.0`;
}

/**
 * The real tool's output lines for a result, device by device.
 *
 * @example
 * ```ts
 * import { checkLeaksFile, formatCheckLeaks } from "./check_leaks.ts";
 * const r = await checkLeaksFile("memscope_dump.csv", { mstxInfo: "step" });
 * console.log(formatCheckLeaks(r).join("\n"));
 * ```
 */
export function formatCheckLeaks(result: CheckLeaksResult): string[] {
  const pool = result.eventType === "HAL" ? "Hal" : result.eventType;
  const lines: string[] = [];
  for (const d of result.devices) {
    switch (d.status) {
      case "too-few-marks":
        lines.push(
          `ERROR: Device ${d.device} has fewer than 3 data points. Please re-collect the data points.`,
        );
        break;
      case "start-out-of-bounds":
        lines.push(
          `INFO: Start index ${result.startIndex} is out of bounds. Device ${d.device} has a total of ${d.marks} MSTX events.`,
        );
        break;
      case "clean":
        lines.push(
          `No ${pool.toLowerCase()} memory leaks detected on device ${d.device}.`,
        );
        break;
      case "leaks":
        lines.push(
          `====== ERROR: Detected memory leaks on device ${d.device} ======`,
        );
        for (const l of d.leaks) {
          lines.push(
            `Direct ${pool} memory leak of ${
              pythonFloat(l.mb)
            } Mb(s) at ${l.ptr} in Index ${l.id}.`,
          );
        }
        break;
    }
  }
  return lines;
}
