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
  mixKey,
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
   * the file is read again, a share of the addresses per pass. Default 1M.
   */
  rowBudget?: number;
  /**
   * Most leaks listed with their details, over all devices (the first by
   * device, then ID); the rest are counted in `leakCount`, `leakedBytes` and
   * `unlisted`. Default 10,000 (a few hundred bytes each).
   */
  maxLeaks?: number;
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
  /** The leaks, by ID; all of them unless `unlisted` is non-zero. */
  leaks: Leak[];
  /** Every leak's bytes, listed or not. */
  leakedBytes: number;
  /** Leaks found but left out of `leaks` (see `maxLeaks`). */
  unlisted: number;
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

/** Which of `parts` passes a Ptr key belongs to. */
function partOf(key: number, parts: number): number {
  return parts === 1 ? 0 : mixKey(key) % parts;
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
  const maxLeaks = options.maxLeaks ?? 10_000;
  if (!(Number.isSafeInteger(maxLeaks) && maxLeaks >= 0)) {
    throw new CheckLeaksError(
      `Invalid leak limit: ${maxLeaks}; use a whole number from 0 (leaks listed in detail)`,
    );
  }
  if (!(MEMORY_POOLS as readonly string[]).includes(eventType)) {
    throw new CheckLeaksError(
      `Unknown event type: ${eventType}; use one of ${MEMORY_POOLS.join(", ")}`,
    );
  }
  return { startIndex, eventType, maxLeaks };
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
  const { startIndex, eventType, maxLeaks } = checkOptions(options);
  await checkFile(path);
  const { mstxInfo } = options;
  const budget = options.rowBudget ?? 500_000;
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
    // N/A (or junk): one key of its own, as the real tool's text compare.
    if (p === undefined) return -0.5;
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
    const base = {
      device,
      marks: m.length,
      leaks: [],
      leakedBytes: 0,
      unlisted: 0,
    };
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

  // Leaked blocks, copied out of each pass's rows so that only one pass's
  // rows are alive at a time; past 4 x maxLeaks, only the first maxLeaks
  // (by device order, ID, file order) are kept.
  const rank = new Int32Array(names.length);
  names.map((d, k) => [d, k] as const).sort((x, y) => deviceOrder(x[0], y[0]))
    .forEach(([, k], i) => rank[k] = i);
  const order = (l: LeakRows) =>
    Array.from({ length: l.length }, (_, i) => i).sort((i, j) =>
      rank[l.device[i]] - rank[l.device[j]] || l.id[i] - l.id[j] ||
      l.offset[i] - l.offset[j]
    );
  const firstOf = (l: LeakRows): LeakRows => {
    const out = new LeakRows(Infinity);
    for (const i of order(l).slice(0, maxLeaks)) {
      out.push(
        MALLOC,
        l.device[i],
        l.id[i],
        l.ptr[i],
        l.size[i],
        l.offset[i],
        l.line[i],
      );
    }
    return out;
  };
  let leaked = new LeakRows(Infinity);
  let counts = new Float64Array(names.length);
  let bytes = new Float64Array(names.length);
  const collect = (rows: LeakRows, k: number, w: Window) => {
    for (const i of replayWindow(rows, k, w)) {
      counts[k]++;
      bytes[k] += rows.size[i];
      leaked.push(
        MALLOC,
        k,
        rows.id[i],
        rows.ptr[i],
        rows.size[i],
        rows.offset[i],
        rows.line[i],
      );
      if (leaked.length >= 4 * maxLeaks + 1024) leaked = firstOf(leaked);
    }
  };
  if (windows.size && kept !== undefined) {
    for (const [k, w] of windows) collect(kept, k, w);
    kept = undefined;
  } else if (windows.size) {
    // Too many memory rows for one pass: keep only rows inside a window,
    // and only the Ptrs of one part per pass (a Ptr's rows never interact
    // with another Ptr's), doubling the parts until a part fits.
    kept = undefined;
    let rows = new LeakRows(budget);
    for (let parts = 1, part = 0; part < parts;) {
      rows.clear();
      let fits = true, inWindow = 0;
      await readMemscopeCsv(path, (row) => {
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
        inWindow++;
        if (!fits) return;
        fits = ev === "MALLOC"
          ? rows.push(MALLOC, k!, id, key, row.size ?? 0, row.offset, row.line)
          : rows.push(FREE, k!, id, key, 0, row.offset, row.line);
      }, {
        columns: COLUMNS,
        startsWith: { Event: "MF", "Event Type": eventType[0] },
      });
      if (!fits) {
        // Enough parts for what this part held, with room for uneven ones;
        // one address alone over the budget cannot be split: take it whole.
        const more = Math.ceil((inWindow * 1.25) / budget);
        parts *= 2 ** Math.max(1, Math.ceil(Math.log2(more)));
        if (parts >= 4096) rows = new LeakRows(Infinity);
        part = 0;
        leaked = new LeakRows(Infinity);
        counts = new Float64Array(names.length);
        bytes = new Float64Array(names.length);
        continue;
      }
      for (const [k, w] of windows) collect(rows, k, w);
      part++;
    }
  }

  // The listed leaks by device and ID; then back to their rows, in file
  // order, for what the typed arrays do not hold.
  leaked = firstOf(leaked);
  const n = leaked.length;
  const leaks: Leak[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const size = leaked.size[i];
    const leak: Leak = {
      id: leaked.id[i],
      ptr: "",
      bytes: size,
      mb: size / 1048576,
      timestamp: "",
      pid: NaN,
      tid: NaN,
      line: leaked.line[i],
    };
    leaks[i] = leak;
    results.get(leaked.device[i])!.leaks.push(leak);
  }
  for (const [k, r] of results) {
    r.leakedBytes = bytes[k];
    r.unlisted = counts[k] - r.leaks.length;
    if (counts[k]) r.status = "leaks";
  }
  if (n) {
    const byOffset = Uint32Array.from(leaks.keys()).sort((i, j) =>
      leaked.offset[i] - leaked.offset[j]
    );
    let next = 0;
    await readMemscopeRowsAt(
      path,
      [...byOffset].map((i) => leaked.offset[i]),
      (row) => {
        const off = row.offset;
        while (next < n && leaked.offset[byOffset[next]] < off) next++;
        if (next === n || leaked.offset[byOffset[next]] !== off) return;
        const leak = leaks[byOffset[next++]];
        leak.ptr = row.ptrText;
        leak.timestamp = row.timestamp;
        leak.pid = row.pid;
        leak.tid = row.tid;
        const owner = row.owner;
        if (owner !== undefined) leak.owner = owner;
      },
    );
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
    leakCount: ordered.reduce((n, d) => n + d.leaks.length + d.unlisted, 0),
    leakedBytes: ordered.reduce((n, d) => n + d.leakedBytes, 0),
    rows: summary.rows,
    bytes: summary.bytes,
  };
}

/**
 * A float as Python's `str()` writes it (`18.0`, `1.9073486328125e-06`): the
 * real tool is Python and prints sizes in MB that way.
 *
 * @example
 * ```ts
 * import { pythonFloat } from "./check_leaks.ts";
 * pythonFloat(2 / 1048576); // "1.9073486328125e-06"
 * ```
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
        if (d.unlisted) {
          lines.push(
            `... and ${d.unlisted} more leak(s) on device ${d.device} not listed (raise --max-leaks to see them).`,
          );
        }
        break;
    }
  }
  return lines;
}
