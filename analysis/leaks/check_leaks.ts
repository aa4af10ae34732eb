/**
 * Offline leak check of an msMemScope event log between mstx marks, as
 * `msmemscope.check_leaks(input_path, mstx_info, start_index)` does it (SPEC
 * section 3): per device, with the marks A, B, C named `mstxInfo` starting at
 * `startIndex`, a HAL block allocated between A and B and not freed by C is a
 * leak. Same rule and same lines as the real tool, in linear time and
 * bounded memory; the result is also given as data.
 *
 * The passes, all over the one file opened at the start (so a link is
 * followed once, and every pass reads the same file): the first reads
 * devices, marks and (budget allowing) memory rows (`_first_pass.ts`); each
 * device's window is replayed over those rows, or, when they did not fit,
 * over rows read again in parts (`_superseded_pass.ts`, `_parts_pass.ts`);
 * the last reads the listed leaks' own rows back (`_details.ts`).
 *
 * @module
 */
// The TypeScript passes (a log the native pass cannot read for certain, or
// a window too large for the row budget) are imported where they run: a
// command loads only what it runs, as start-up is part of every check.
import type { Window } from "./_leak_rows.ts";
import type { FirstPass } from "./_first_pass.ts";
import { nativeFirstPass } from "./_native_first_pass.ts";
import { nativeStream, nativeWindowPass } from "./_native_window_pass.ts";
import { FoundLeaks } from "./_found.ts";
import { leakDetails } from "./_details.ts";
import { type CheckLeaksOptions, checkOptions } from "./options.ts";
import { openEventLog } from "../memscope_csv/open.ts";
import { LEAK_SPAN_VALUES } from "../../ffi/bindings.ts";
import type { CheckLeaksResult, DeviceLeaks } from "./result.ts";

/**
 * Each device's result so far: its status, and its window when it has
 * three marks from `startIndex` on.
 */
function deviceWindows(
  { devices, marks }: Pick<FirstPass, "devices" | "marks">,
  startIndex: number,
): { results: DeviceLeaks[]; windows: Map<number, Window> } {
  const windows = new Map<number, Window>();
  // Host memory (Device cpu/host) belongs to no device, and a Python job's
  // marks are stamped with its current device: where host rows have no
  // marks of their own, the marks of the one device that has some delimit
  // them (a log file holds one device's rows and its processes' host rows).
  const marked = devices.flatMap((d, k) =>
    marks[k].length && d !== "cpu" && d !== "host" ? [k] : []
  );
  const results = devices.map((device, k): DeviceLeaks => {
    const borrow = !marks[k].length &&
      (device === "cpu" || device === "host") && marked.length === 1;
    const m = (borrow ? [...marks[marked[0]]] : marks[k]).sort((x, y) => x - y);
    const base = {
      device,
      marks: m.length,
      leaks: [],
      leakedBytes: 0,
      unlisted: 0,
    };
    if (m.length < 3) return { ...base, status: "too-few-marks" };
    if (startIndex + 2 >= m.length) {
      return { ...base, status: "start-out-of-bounds" };
    }
    const window = {
      a: m[startIndex],
      b: m[startIndex + 1],
      c: m[startIndex + 2],
    };
    windows.set(k, window);
    return { ...base, status: "clean", window };
  });
  return { results, windows };
}

/**
 * About how many memory rows the windows hold, from each device's count of
 * them and their ID range: spread evenly over it, half of them MALLOCs
 * (kept from A to B), half FREEs (from A to C). Undefined without counts.
 */
function rowsInWindows(
  { spans }: Pick<FirstPass, "spans">,
  windows: Map<number, Window>,
): number | undefined {
  if (spans === undefined) return undefined;
  let rows = 0;
  for (const [k, { a, b, c }] of windows) {
    const at = LEAK_SPAN_VALUES * k;
    const [count, min, max] = spans.subarray(at, at + 3);
    const share = (end: number) => {
      const inside = Math.min(end, max) - Math.max(a, min);
      return inside < 0 ? 0 : max > min ? inside / (max - min) : 1;
    };
    rows += count * (share(b) + share(c)) / 2;
  }
  return rows;
}

/**
 * Checks the event log at `path` for leaks between the marks named
 * `mstxInfo`. Reads the file once when its memory rows fit `rowBudget`
 * (again, in parts, when not), then once more around the leaked rows only.
 * Throws `CheckLeaksError` for bad options and `MemscopeCsvError` for a
 * file that is missing, not a regular file, or not an msMemScope log.
 *
 * @example
 * ```ts
 * import { checkLeaksFile } from "./mod.ts";
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
  const checked = checkOptions(options);
  const { mstxInfo, startIndex, eventType, maxLeaks, rowBudget, detail } =
    checked;
  using log = await openEventLog(path);
  const native = await nativeFirstPass(log, checked);
  const first = native ??
    await (await import("./_first_pass.ts")).firstPass(log, checked);
  const { devices, index, ptrs } = first;
  const { results, windows } = deviceWindows(first, startIndex);

  // Leaks are listed by device (in order of appearance), then ID.
  const rank = Int32Array.from(devices.keys());
  const found = new FoundLeaks(rank, maxLeaks);
  let passes = 1;
  // Past the budget, natively: the rows inside the windows alone, where
  // they look like fitting it (two threads read them), or the windows
  // replayed as the rows are read (one thread reads, one replays; past
  // its room, in parts), each the other's fallback; past all of them, the
  // passes in parts of TypeScript. Each says whether `found` holds every
  // window's leaks. The replay reads on from the first pass's rows where
  // it comes first: after the other, it finds them gone.
  const rowsInside = async () => {
    passes++;
    const rows = await nativeWindowPass(log, checked, { first, windows });
    if (rows !== undefined) await found.collect(rows, windows);
    return rows !== undefined;
  };
  let full = false;
  const replayed = async (resume?: FirstPass["resume"]) => {
    const stream = await nativeStream(log, checked, {
      first,
      windows,
      resume,
      found,
    });
    passes += stream.reads;
    full = stream.full;
    return stream.complete;
  };
  const guess = rowsInWindows(first, windows) ?? Infinity;
  // A replay that stopped at its room in as many parts as it may split
  // into leaves the rows inside the windows to try only where they may yet
  // fit: where the guess puts them past twice the budget, keeping them
  // would stop at the budget, partway through a read.
  const rowsMayFit = () => !full || guess <= 2 * rowBudget;
  let complete = !windows.size;
  if (windows.size && first.rows !== undefined) {
    await found.collect(first.rows, windows);
    complete = true;
  } else if (windows.size && native) {
    complete = guess > rowBudget
      ? await replayed(first.resume) || (rowsMayFit() && await rowsInside())
      : await rowsInside() || await replayed();
  }
  if (!complete) {
    const { supersededRows } = await import("./_superseded_pass.ts");
    const { passesInParts } = await import("./_parts_pass.ts");
    const input = { source: log, eventType, rowBudget, index, windows };
    const { superseded, reads } = await supersededRows(input);
    const spare = first.spare;
    passes += reads +
      await passesInParts({ ...input, ptrs, superseded, spare }, found);
  }

  const listed = found.listed();
  const leaks = await leakDetails(log, listed, {
    detail,
    logBytes: first.summary.bytes,
  });
  for (let i = 0; i < leaks.length; i++) {
    results[listed.device[i]].leaks.push(leaks[i]);
  }
  results.forEach((r, k) => {
    r.leakedBytes = found.bytes[k];
    r.unlisted = found.counts[k] - r.leaks.length;
    if (found.counts[k]) r.status = "leaks";
  });

  return {
    input: path,
    mstxInfo,
    startIndex,
    startIndexText: checked.startIndexText,
    eventType,
    devices: results,
    leakCount: results.reduce((n, d) => n + d.leaks.length + d.unlisted, 0),
    leakedBytes: results.reduce((n, d) => n + d.leakedBytes, 0),
    rows: first.summary.rows,
    bytes: first.summary.bytes,
    passes,
  };
}
