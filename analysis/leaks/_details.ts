/**
 * check_leaks' last pass: back to the listed leaks' own rows, reading only
 * around them, for what the typed arrays do not hold (Ptr as written,
 * timestamp, pid, tid, owner).
 *
 * @module
 */
import {
  type EventLogSource,
  readMemscopeRowsAt,
} from "../memscope_csv/read.ts";
import { type LeakRows, PtrKeys } from "./_leak_rows.ts";
import type { LeakDetail } from "./options.ts";
import type { Leak } from "./result.ts";

/**
 * One {@link Leak} per row of `listed`, in its order, with the details read
 * from the log; for `"printed"`, only what a printed leak shows (ID and Ptr
 * as written), read only where the arrays cannot spell them. `logBytes`:
 * the bytes the passes read, a log now shorter refused as cut.
 */
export async function leakDetails(
  source: EventLogSource,
  listed: LeakRows,
  { detail = "all", logBytes }: { detail?: LeakDetail; logBytes?: number } = {},
): Promise<Leak[]> {
  const n = listed.length;
  const leaks: Leak[] = new Array(n);
  // Printed, each Ptr spelled from its key where every one can be: one
  // loop of its own, as this runs once, cold, over up to 10,000 leaks (a
  // map, a search and a loop more took 9-12 ms of them).
  let spelled = detail === "printed" && listed.textsFromValues;
  for (let i = 0; i < n; i++) {
    const size = listed.size[i];
    const ptr = spelled ? PtrKeys.text(listed.ptr[i]) : "";
    if (ptr === undefined) spelled = false;
    leaks[i] = {
      id: listed.id[i],
      index: String(listed.id[i]),
      ptr: ptr ?? "",
      bytes: size,
      mb: size / 1048576,
      timestamp: "",
      pid: NaN,
      tid: NaN,
      line: listed.line[i],
    };
  }
  if (n === 0 || spelled) return leaks;
  const byOffset = Uint32Array.from(leaks.keys()).sort((i, j) =>
    listed.offset[i] - listed.offset[j]
  );
  let next = 0;
  await readMemscopeRowsAt(
    source,
    [...byOffset].map((i) => listed.offset[i]),
    (row) => {
      const off = row.offset;
      while (next < n && listed.offset[byOffset[next]] < off) next++;
      if (next === n || listed.offset[byOffset[next]] !== off) return;
      const leak = leaks[byOffset[next++]];
      leak.index = row.idText;
      leak.ptr = row.ptrText;
      leak.timestamp = row.timestamp;
      leak.pid = row.pid;
      leak.tid = row.tid;
      const owner = row.owner;
      if (owner !== undefined) leak.owner = owner;
    },
    { logBytes },
  );
  return leaks;
}
