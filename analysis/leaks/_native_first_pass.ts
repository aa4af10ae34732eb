/**
 * check_leaks' first pass in native code (`ffi/daemon/leak_scan.c`): the
 * same devices, marks and rows as `_first_pass.ts`, without handing each
 * row to JavaScript. The header is read and checked by the TypeScript
 * reader (its errors are the ones a person sees); the rows from there on
 * natively. Undefined where the native pass cannot give the same answer
 * for certain (it says so rather than guess): the caller then runs the
 * TypeScript pass. Also the second native pass, of a log whose memory rows
 * passed the row budget: the rows inside the windows only, or the windows
 * replayed as the rows are read, in as many parts as their blocks need.
 *
 * @module
 */
import { eventLogFd, type EventLogFile } from "../memscope_csv/open.ts";
import { MemscopeCsvError } from "../memscope_csv/header.ts";
import {
  type EventLogSource,
  readMemscopeStart,
} from "../memscope_csv/read.ts";
import {
  leakScan,
  type LeakScanInput,
  type LeakScanResult,
} from "../../ffi/bindings.ts";
import type { FirstPass, Resume } from "./_first_pass.ts";
import { LEAK_COLUMNS, LeakRows, PtrKeys, type Window } from "./_leak_rows.ts";
import type { CheckedOptions } from "./options.ts";
import type { FoundLeaks } from "./_found.ts";

/** Marks a first try of a pass has room for: a job marks each step. */
const MARK_ROOM = 65_536;

/** MEMSCOPE_HEADER positions of LEAK_COLUMNS, in the order leak_scan.c reads them. */
const HEADER_AT = [0, 1, 2, 3, 7, 8, 9];

/** A log a native pass can read, and its descriptor. */
interface NativeLog {
  log: { file: EventLogFile; label: string };
  fd: number;
}

/** The descriptor a native pass reads, where the source is a file it can read. */
function nativeFd(source: EventLogSource): NativeLog | undefined {
  if (typeof source === "string") return undefined;
  const fd = eventLogFd(source.file);
  return fd === undefined ? undefined : { log: source, fd };
}

/**
 * A native pass over the log into `rows` (their count and whether their
 * texts need reading set here), with its marks; `size`: how far it may
 * read, which sizes the room for marks; `from`: where it starts reading
 * rows, when not at the first.
 */
async function scan(
  { log: source, fd }: NativeLog,
  size: number,
  options: CheckedOptions,
  rows: LeakRows,
  windows?: LeakScanInput["windows"],
  from?: { offset: number; line: number },
): Promise<
  {
    found: LeakScanResult;
    markDevice: Uint32Array;
    markId: Float64Array;
    header: string[];
  } | undefined
> {
  const start = await readMemscopeStart(source, { columns: LEAK_COLUMNS });
  if (start === undefined) return undefined;
  // A mark row has at least 8 fields, 19 bytes: room for every row that
  // could be one is address space the log's size over 16 (100 MB for 134
  // MB), which V8 answered with collections as it came (external memory
  // pressure: scavenges and a mark-compact, 5-9 ms of a command). A first
  // try has room for MARK_ROOM marks; a log with more is read again with
  // room for all.
  const all = Math.ceil(size / 16) + 1;
  for (let room = Math.min(MARK_ROOM, all);; room = all) {
    // Both in one buffer, as LeakRows carves its arrays (#carve says why).
    const markBuffer = new ArrayBuffer(room * 12);
    const markId = new Float64Array(markBuffer, 0, room);
    const markDevice = new Uint32Array(markBuffer, room * 8, room);
    let found: LeakScanResult;
    try {
      found = await leakScan({
        fd,
        columns: HEADER_AT.map((k) => start.columns.at[k]),
        offset: from?.offset ?? start.offset,
        line: from?.line ?? start.line,
        rows,
        budget: options.rowBudget,
        markDevice,
        markId,
        eventType: options.eventType,
        mstxInfo: options.mstxInfo,
        windows,
        startIndex: windows ? undefined : options.startIndex,
        halfAt: rows.halfAt,
      });
    } catch (e) {
      throw new MemscopeCsvError(
        `Cannot read ${source.label}: ${(e as Error).message}`,
      );
    }
    if (found.marksFull && room < all) continue;
    rows.skip(found.firstRow);
    rows.length = found.rowsKept;
    rows.textsFromValues = found.oddIds === 0;
    return { found, markDevice, markId, header: start.columns.names };
  }
}

/**
 * The first pass natively, or undefined to run the TypeScript one.
 *
 * @example
 * ```ts ignore
 * const first = await nativeFirstPass(log, checked) ?? await firstPass(log, checked);
 * ```
 */
export async function nativeFirstPass(
  source: EventLogSource,
  options: CheckedOptions,
): Promise<FirstPass | undefined> {
  const native = nativeFd(source);
  if (native === undefined) return undefined;
  const size = await native.log.file.seek(0, Deno.SeekMode.End);
  // As the TypeScript pass sizes them: untouched room costs address space.
  const spare = new LeakRows(options.rowBudget, Math.ceil(size / 64), {
    halves: true,
  });
  const pass = await scan(native, size, options, spare);
  if (pass === undefined) return undefined;
  const { found, markDevice, markId, header } = pass;
  if (found.fallback || new Set(found.devices).size !== found.devices.length) {
    return undefined;
  }
  const resume = found.overflow && found.resume && found.oddIds === 0
    ? { ...found.resume, rows: found.rowsKept }
    : undefined;
  const devices = found.devices;
  const index = new Map(devices.map((d, k) => [d, k]));
  const marks: number[][] = devices.map(() => []);
  for (let m = 0; m < found.marks; m++) {
    marks[markDevice[m]].push(markId[m]);
  }
  return {
    devices,
    index,
    marks,
    rows: found.overflow ? undefined : spare,
    spare,
    ptrs: new PtrKeys(),
    spans: found.spans,
    resume,
    summary: {
      rows: found.dataRows,
      bytes: found.bytes,
      header,
    },
  };
}

/** What a native pass over the windows is to do: {@link nativeWindowPass}. */
export interface WindowPass {
  /** The first pass: its devices, its arrays (`spare`), how far it read. */
  first: Pick<FirstPass, "devices" | "spare" | "summary">;
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

/** A replay's leaks: those of part `part` of `parts` (the part it was given, split). */
export interface StreamedLeaks {
  rows: LeakRows;
  parts: number;
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
  const abc = new Float64Array(devices.length * 3).fill(NaN);
  for (const [k, w] of windows) abc.set([w.a, w.b, w.c], 3 * k);
  const resume = stream?.resume;
  // A part of more than one reads every row: none are kept for it.
  const from = (stream?.part?.parts ?? 1) === 1 && resume?.rows === spare.length
    ? resume
    : undefined;
  // Reading on, the pass replays the rows where the first pass left them.
  if (from === undefined) spare.clear();
  // As far as the first pass read: a log still written has grown since.
  const end = summary.bytes;
  const pass = await scan(native, end, options, spare, {
    devices,
    abc,
    end,
    stream: stream !== undefined,
    resumeRows: from?.rows,
    part: stream?.part,
    splitUpTo: stream && MAX_STREAM_PARTS,
  }, from);
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
  return { rows: pass.first.spare, parts: found.streamParts };
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
    for (let q = part.part + part.parts; q < leaks.parts; q += part.parts) {
      left.push({ part: q, parts: leaks.parts });
    }
  }
  return { reads, complete: true, full: false };
}
