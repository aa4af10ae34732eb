/**
 * For logs read in parts: the MALLOC rows that a later MALLOC with the same
 * device and ID replaces. msMemScope keys pending blocks by ID, so of two
 * such rows only the later one (in file order, equal IDs being sorted
 * stably) can leak; real files do hold duplicated IDs. The parts passes
 * split rows by Ptr, which may put the two rows in different parts, so the
 * replaced rows are found first, here, in passes split by ID.
 *
 * @module
 */
import { type EventLogSource, readMemscopeCsv } from "../memscope_csv/mod.ts";
import { LEAK_COLUMNS, mixKey, type Window } from "./_leak_rows.ts";

/** What the ID passes need to know. */
export interface SupersededInput {
  source: EventLogSource;
  eventType: string;
  rowBudget: number;
  index: Map<string, number>;
  windows: Map<number, Window>;
}

/**
 * Byte offsets of the in-window MALLOC rows a later same-ID row replaces,
 * and how many times the log was read for them.
 */
export async function supersededRows(
  input: SupersededInput,
): Promise<{ superseded: Set<number>; reads: number }> {
  const { source, eventType, rowBudget, index, windows } = input;
  const out = new Set<number>();
  let reads = 0;
  // Per part, each device's IDs with the offset of their last MALLOC so
  // far: the budget bounds the IDs, not the rows, so that a window whose
  // MALLOCs share one ID fits one part (keeping its rows, no split by ID
  // could part them, and the parts doubled without end).
  for (let parts = 1, part = 0; part < parts;) {
    const last = new Map<number, Map<number, number>>();
    const replaced: number[] = [];
    let ids = 0, fits = true, seen = 0;
    reads++;
    await readMemscopeCsv(source, (row) => {
      if (row.event !== "MALLOC" || row.eventType !== eventType) return;
      const k = index.get(row.device);
      const w = k === undefined ? undefined : windows.get(k);
      if (w === undefined) return;
      const x = row.id;
      if (!(x >= w.a && x <= w.b)) return;
      if (parts > 1 && mixKey(x) % parts !== part) return;
      seen++;
      if (!fits) return;
      let ofDevice = last.get(k!);
      if (ofDevice === undefined) last.set(k!, ofDevice = new Map());
      const before = ofDevice.get(x);
      if (before !== undefined) replaced.push(before);
      else if (++ids > rowBudget) {
        fits = false;
        return;
      }
      ofDevice.set(x, row.offset);
    }, {
      columns: LEAK_COLUMNS,
      startsWith: { Event: "M", "Event Type": eventType[0] },
    });
    if (!fits) {
      parts *= 2 ** Math.max(1, Math.ceil(Math.log2(seen / rowBudget + 1)));
      part = 0;
      out.clear();
      continue;
    }
    for (const offset of replaced) out.add(offset);
    part++;
  }
  return { superseded: out, reads };
}
