/**
 * check_leaks' passes for logs whose memory rows do not fit the row budget:
 * only rows inside a window are kept, and only the Ptrs of one part per
 * pass (a Ptr's rows never interact with another Ptr's), doubling the parts
 * until a part fits.
 *
 * @module
 */
import { type EventLogSource, readMemscopeCsv } from "../memscope_csv/mod.ts";
import {
  FREE,
  LEAK_COLUMNS,
  LeakRows,
  MALLOC,
  mixKey,
  PtrKeys,
  type Window,
} from "./_leak_rows.ts";
import type { FoundLeaks } from "./_found.ts";

/** Which of `parts` passes a Ptr key belongs to. */
function partOf(key: number, parts: number): number {
  return parts === 1 ? 0 : mixKey(key) % parts;
}

/** What the passes in parts need to know. */
export interface PartsInput {
  source: EventLogSource;
  eventType: string;
  rowBudget: number;
  /** Device index of each Device Id. */
  index: Map<string, number>;
  /** The window of each device index that has one. */
  windows: Map<number, Window>;
  ptrs: PtrKeys;
  /** Offsets of MALLOC rows a later row with the same ID replaces. */
  superseded: Set<number>;
  /** Arrays of `rowBudget` rows to fill (the first pass's, grown already). */
  spare: LeakRows;
}

/**
 * Reads the log in parts until every part fits, collecting into `found`;
 * returns how many times it read the log.
 */
export async function passesInParts(
  input: PartsInput,
  found: FoundLeaks,
): Promise<number> {
  const { source, eventType, rowBudget, index, windows, ptrs, superseded } =
    input;
  // Reused, not made anew: two sets of full arrays would double the peak.
  let rows = input.spare, reads = 0;
  for (let parts = 1, part = 0; part < parts;) {
    rows.clear();
    reads++;
    let fits = true, inWindow = 0;
    await readMemscopeCsv(source, (row) => {
      const ev = row.event;
      if (ev !== "MALLOC" && ev !== "FREE") return;
      if (row.eventType !== eventType) return;
      const k = index.get(row.device);
      const w = k === undefined ? undefined : windows.get(k);
      if (w === undefined) return;
      const id = row.id;
      if (!(id >= w.a && id <= (ev === "MALLOC" ? w.b : w.c))) return;
      if (ev === "MALLOC" && superseded.has(row.offset)) return;
      const key = ptrs.of(row);
      if (partOf(key, parts) !== part) return;
      inWindow++;
      if (!fits) return;
      fits = ev === "MALLOC"
        ? rows.push(
          MALLOC,
          k!,
          id,
          key,
          row.mallocSize ?? NaN, // no size: refused if in a window
          row.offset,
          row.line,
        )
        // Only leaked MALLOC rows are read back: a FREE's place is not kept.
        : rows.push(FREE, k!, id, key, 0, 0, 0);
    }, {
      columns: LEAK_COLUMNS,
      startsWith: { Event: "MF", "Event Type": eventType[0] },
    });
    if (!fits) {
      // Enough parts for what this part held, with room for uneven ones;
      // one address alone over the budget cannot be split: take it whole.
      const more = Math.ceil((inWindow * 1.25) / rowBudget);
      parts *= 2 ** Math.max(1, Math.ceil(Math.log2(more)));
      if (parts >= 4096) rows = new LeakRows(Infinity);
      part = 0;
      found.reset();
      continue;
    }
    await found.collect(rows, windows);
    part++;
  }
  return reads;
}
