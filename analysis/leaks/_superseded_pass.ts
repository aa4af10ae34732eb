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
  let device = new Uint32Array(1024), id = new Float64Array(1024);
  let offset = new Float64Array(1024);
  let reads = 0;
  for (let parts = 1, part = 0; part < parts;) {
    let n = 0, fits = true, seen = 0;
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
      if (n === id.length) {
        if (n >= rowBudget) {
          fits = false;
          return;
        }
        const grow = <T extends Float64Array | Uint32Array>(a: T, b: T) => {
          b.set(a);
          return b;
        };
        device = grow(device, new Uint32Array(n * 2));
        id = grow(id, new Float64Array(n * 2));
        offset = grow(offset, new Float64Array(n * 2));
      }
      device[n] = k!;
      id[n] = x;
      offset[n++] = row.offset;
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
    const order = Uint32Array.from({ length: n }, (_, i) => i).sort((i, j) =>
      device[i] - device[j] || id[i] - id[j] || offset[i] - offset[j]
    );
    for (let r = 0; r + 1 < n; r++) {
      const i = order[r], j = order[r + 1];
      if (device[i] === device[j] && id[i] === id[j]) out.add(offset[i]);
    }
    part++;
  }
  return { superseded: out, reads };
}
