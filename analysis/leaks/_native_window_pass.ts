/**
 * check_leaks' passes after the first, in native code, for a log whose
 * memory rows passed the row budget: the rows inside the windows alone
 * (`nativeWindowPass`), or the windows replayed as the rows are read and
 * their leaks kept (`nativeStreamPass`, `nativeStream`: in as many parts
 * as their blocks need).
 *
 * @module
 */
import type { EventLogSource } from "../memscope_csv/read.ts";
import {
  LEAK_SPAN_VALUES,
  LEAK_WINDOW_VALUES,
  type LeakScanResult,
} from "../../ffi/bindings.ts";
import type { FirstPass, Resume } from "./_first_pass.ts";
import type { LeakRows, Window } from "./_leak_rows.ts";
import type { CheckedOptions } from "./options.ts";
import type { FoundLeaks } from "./_found.ts";
import { nativeFd, scan } from "./_native_scan.ts";

/** What a native pass over the windows is to do: {@link nativeWindowPass}. */
export interface WindowPass {
  /** The first pass: its devices, its arrays (`spare`), how far it read. */
  first: Pick<FirstPass, "devices" | "spare" | "summary" | "spans" | "freed">;
  /** Each device index's window. */
  windows: Map<number, Window>;
}

/** Part `part` of `parts` of the blocks, by device and Ptr. */
export interface Part {
  part: number;
  parts: number;
}

/** What a replay as the rows are read is to do: {@link nativeStreamPass}. */
export interface StreamPass extends WindowPass {
  /** Read on from where the first pass's rows end. */
  resume?: Resume;
  /** From the first row, the blocks of this part alone (default: all). */
  part?: Part;
}

/**
 * A replay's leaks: those of part `part` of `parts` (the part it was given,
 * split), as rows and, past the first `maxLeaks`, counted (`unlisted`).
 */
export interface StreamedLeaks {
  rows: LeakRows;
  parts: number;
  unlisted: LeakScanResult["unlisted"];
}

/**
 * The most parts a replay splits the blocks into: each part is a read of
 * the log.
 */
const MAX_STREAM_PARTS = 64;

/**
 * A native pass over the windows into the first pass's arrays (`spare`),
 * `stream` or not; undefined where it falls back.
 */
async function windowScan(
  source: EventLogSource,
  options: CheckedOptions,
  { first, windows }: WindowPass,
  stream?: StreamPass,
): Promise<LeakScanResult | undefined> {
  const { devices, spare, summary } = first;
  const native = nativeFd(source);
  if (native === undefined) return undefined;
  const perDevice = new Float64Array(devices.length * LEAK_WINDOW_VALUES)
    .fill(NaN);
  for (const [k, w] of windows) {
    const at = LEAK_SPAN_VALUES * k;
    const [disorder, once] = first.spans?.subarray(at + 3, at + 5) ?? [NaN, 0];
    perDevice.set([w.a, w.b, w.c, disorder, once], LEAK_WINDOW_VALUES * k);
  }
  const resume = stream?.resume;
  // A part of more than one reads every row: none are kept for it.
  const from = (stream?.part?.parts ?? 1) === 1 && resume?.rows === spare.length
    ? resume
    : undefined;
  // Reading on, the pass replays the rows where the first pass left them.
  if (from === undefined) spare.clear();
  // As far as the first pass read: a log still written has grown since.
  const end = summary.bytes;
  const pass = await scan(native, options, {
    size: end,
    rows: spare,
    windows: {
      devices,
      perDevice,
      end,
      stream: stream !== undefined,
      resumeRows: from?.rows,
      part: stream?.part,
      splitUpTo: stream && MAX_STREAM_PARTS,
      maxListed: options.maxLeaks,
    },
    from,
    freed: stream && first.freed,
  });
  return pass?.found;
}

/**
 * A second native pass, once the windows are known, for a log whose memory
 * rows passed the row budget: the rows inside the windows, into `rows`
 * (the first pass's arrays). Undefined when the pass cannot give the same
 * answer for certain (over the budget, or not for the native pass to
 * read). The first pass's rows in `spare` are gone after it.
 *
 * @example
 * ```ts ignore
 * const rows = await nativeWindowPass(log, checked, { first, windows });
 * ```
 */
export async function nativeWindowPass(
  source: EventLogSource,
  options: CheckedOptions,
  pass: WindowPass,
): Promise<LeakRows | undefined> {
  const found = await windowScan(source, options, pass);
  if (found === undefined || found.fallback || found.overflow) return undefined;
  return pass.first.spare;
}

/**
 * A second native pass that replays the windows as the rows are read and
 * keeps their leaks (leak_stream.c), reading on from `resume` (the first
 * pass's rows still in the arrays) where given, or the blocks of one
 * `part` alone. A replay at its room splits its part in two, as often as
 * it needs to (up to MAX_STREAM_PARTS parts), and keeps the blocks of the
 * first half: the rows are those of part `part` of `parts`, where
 * `parts` may have grown. Undefined when the pass cannot give the same
 * answer for certain (rows too far out of ID order for the replay, or not
 * for the native pass to read); `"full"` when it stopped at its room in
 * as many parts as it may split into. Either way the first pass's rows in
 * `spare` are gone after it: the replay gives their pages back (they read
 * as zeros), so only what a pass writes anew is read from them.
 *
 * @example
 * ```ts ignore
 * const leaks = await nativeStreamPass(log, checked, { first, windows, resume: first.resume });
 * ```
 */
export async function nativeStreamPass(
  source: EventLogSource,
  options: CheckedOptions,
  pass: StreamPass,
): Promise<StreamedLeaks | "full" | undefined> {
  const found = await windowScan(source, options, pass, pass);
  if (found === undefined) return undefined;
  if (found.fallback && found.streamFull) return "full";
  if (found.fallback || found.overflow) return undefined;
  return {
    rows: pass.first.spare,
    parts: found.streamParts,
    unlisted: found.unlisted,
  };
}

/**
 * The windows replayed as the rows are read (from `resume`, where given),
 * each replay's leaks collected into `found`. A replay that split its
 * part at its room leaves the other parts it split off to more reads of
 * the log, from the start, each of which may split too. Says how many
 * reads it took, whether it got through, and whether a replay stopped at
 * its room (`full`) where it could not split: where it did not get
 * through, `found` is empty.
 *
 * @example
 * ```ts ignore
 * const { reads, complete } = await nativeStream(log, checked, { first, windows, found });
 * ```
 */
export async function nativeStream(
  source: EventLogSource,
  options: CheckedOptions,
  { first, windows, resume, found }: Omit<StreamPass, "part"> & {
    found: FoundLeaks;
  },
): Promise<{ reads: number; complete: boolean; full: boolean }> {
  // The parts still to read: part q of parts holds parts q, q + parts, ...
  // of any multiple of parts.
  const left: Part[] = [{ part: 0, parts: 1 }];
  let reads = 0;
  for (let part = left.pop(); part; part = left.pop()) {
    const leaks = await nativeStreamPass(source, options, {
      first,
      windows,
      resume: reads++ ? undefined : resume,
      part,
    });
    if (leaks === undefined || leaks === "full") {
      found.reset();
      return { reads, complete: false, full: leaks === "full" };
    }
    await found.collect(leaks.rows, windows);
    leaks.unlisted.forEach((u, k) => found.count(k, u.count, u.bytes));
    for (let q = part.part + part.parts; q < leaks.parts; q += part.parts) {
      left.push({ part: q, parts: leaks.parts });
    }
  }
  return { reads, complete: true, full: false };
}
