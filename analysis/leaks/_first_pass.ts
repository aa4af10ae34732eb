/**
 * check_leaks' first pass over the log: the devices, each device's marks
 * named `mstxInfo`, and the pool's MALLOC/FREE rows while they fit the row
 * budget. Devices are every Device Id but `N/A` that any row carries, in
 * the order they first appear, as msMemScope groups rows.
 *
 * @module
 */
import {
  type EventLogSource,
  readMemscopeCsv,
  type ReadSummary,
} from "../memscope_csv/mod.ts";
import { FREE, LEAK_COLUMNS, LeakRows, MALLOC, PtrKeys } from "./_leak_rows.ts";
import type { CheckedOptions } from "./options.ts";

/** What the first pass found. */
export interface FirstPass {
  /** Device Ids as written, by device index (order of first appearance). */
  devices: string[];
  /** Device index of each Device Id. */
  index: Map<string, number>;
  /** IDs of each device's marks named mstxInfo, in file order. */
  marks: number[][];
  /** The pool's memory rows, or undefined when they passed the budget. */
  rows: LeakRows | undefined;
  /** The arrays that held them, for a later pass to fill again. */
  spare: LeakRows;
  /** Keys of the Ptrs read, to be kept for later passes. */
  ptrs: PtrKeys;
  summary: ReadSummary;
  /**
   * The native pass's count of each device's memory rows (kept or not),
   * their smallest and largest ID, its MALLOCs' disorder and whether the
   * file's MALLOC IDs each came once, as `LeakScanResult.spans`.
   */
  spans?: Float64Array;
  /**
   * The native pass's rows past the budget: the first `rows` of `spare` are
   * every memory row a window may hold before `offset` (on `line`), which a
   * streaming pass replays and reads on from. Undefined when the rows fit,
   * or are no such prefix, or their IDs are not all written as their
   * numbers (a leak then needs its row read back, by its row's own flag).
   */
  resume?: Resume;
  /**
   * The native pass's Ptrs freed (`LeakScanInput.freed`), filled where
   * the rows passed the budget, for a streaming pass.
   */
  freed?: Uint8Array;
}

/** Where a pass over rows kept reads on from: see {@link FirstPass.resume}. */
export interface Resume {
  offset: number;
  line: number;
  rows: number;
}

/**
 * Reads the log once for its devices, marks and (budget allowing) memory
 * rows. Every row reaches JavaScript, since any row can name a device.
 */
export async function firstPass(
  source: EventLogSource,
  options: CheckedOptions,
): Promise<FirstPass> {
  const { eventType, mstxInfo, rowBudget } = options;
  const devices: string[] = [];
  const index = new Map<string, number>();
  const marks: number[][] = [];
  const ptrs = new PtrKeys();
  const deviceIndex = (d: string) => {
    let k = index.get(d);
    if (k === undefined) {
      k = devices.length;
      index.set(d, k);
      devices.push(d);
      marks.push([]);
    }
    return k;
  };
  // msMemScope writes a memory row in 100 bytes or more: at 64 a row the
  // room is rarely short, and room never filled is never touched.
  const size = typeof source === "string"
    ? 0
    : await source.file.seek(0, Deno.SeekMode.End);
  const spare = new LeakRows(rowBudget, Math.ceil(size / 64));
  let rows: LeakRows | undefined = spare;
  let lastDevice = "N/A", k = -1;
  const summary = await readMemscopeCsv(source, (row) => {
    const d = row.device;
    if (d !== lastDevice) {
      lastDevice = d;
      k = d === "N/A" ? -1 : deviceIndex(d);
    }
    if (k < 0) return;
    const ev = row.event;
    const memory = ev === "MALLOC" || ev === "FREE";
    if (memory ? row.eventType !== eventType : ev !== "MSTX") return;
    const id = row.id;
    if (Number.isNaN(id)) return;
    if (memory) {
      if (rows === undefined) return;
      const ok = ev === "MALLOC"
        ? rows.push(
          MALLOC,
          k,
          id,
          ptrs.of(row),
          row.mallocSize ?? NaN, // no size: refused if in a window
          row.offset,
          row.line,
        )
        // A FREE's place too, as leak_scan.c keeps it.
        : rows.push(FREE, k, id, ptrs.of(row), 0, row.offset, row.line);
      if (!ok) rows = undefined;
    } else if (row.eventType === "Mark" && row.nameEquals(mstxInfo)) {
      marks[k].push(id);
    }
  }, { columns: LEAK_COLUMNS });
  return { devices, index, marks, rows, spare, ptrs, summary };
}
