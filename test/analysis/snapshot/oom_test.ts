/**
 * The OOM files from an event log: names no file has, and the memUsageInfo
 * CSV per owner with current and peak MB.
 */
import assert from "node:assert/strict";
import { EVENT_LOG_HEADER } from "../../../analysis/memscope_csv/mod.ts";
import { fileStamp } from "../../../analysis/files.ts";
import { writeOomFiles } from "../../../analysis/snapshot/oom.ts";
import { checkSnapshots } from "./_check.ts";

const MiB = 1 << 20;

function row(
  id: number,
  event: string,
  pool: string,
  ptr: number,
  size: number,
  owner = "",
  pid = 7,
): string {
  const hex = `0x${ptr.toString(16).padStart(16, "0")}`;
  return `${id},${event},${pool},N/A,${
    1764753083997498000 + id * 1000
  },${pid},${pid},0,${hex},"{allocation_id:${id},addr:${hex},size:${size}${
    owner ? `,owner:${owner}` : ""
  }}",,`;
}

Deno.test("OOM files hold the state at the failure, and take the next second's names when a file has the OOM's, leaving it alone", async () => {
  const dir = Deno.makeTempDirSync();
  const log = `${dir}/memscope_dump_20260101000000.csv`;
  const base = 0x12c000000000;
  Deno.writeTextFileSync(
    log,
    [
      EVENT_LOG_HEADER,
      row(1, "MALLOC", "HAL", base, 4 * MiB),
      row(2, "MALLOC", "PTA", base, MiB, "PTA@model@weight"),
      row(3, "MALLOC", "PTA", base + MiB, 2 * MiB, "PTA@model@activation"),
      row(4, "FREE", "PTA", base + MiB, 2 * MiB),
      row(5, "MALLOC", "PTA", base + MiB, MiB / 2, "PTA@model@activation"),
      row(6, "MALLOC", "HAL", base + 8 * MiB, MiB, "", 8), // another process
      `7,OOM_DETAIL,HAL,N/A,1764753083997505000,7,7,0,N/A,"{size:${
        8 * MiB
      },error:207001,used:${4 * MiB}}",,`,
      // After the OOM the job goes on and frees its weight: not in the files.
      row(8, "FREE", "PTA", base, MiB),
      "",
    ].join("\n"),
  );
  const at = new Date(2026, 0, 2, 3, 4, 5);
  const taken = `${dir}/oom_snapshot_7_${fileStamp(at)}.pickle`;
  Deno.writeTextFileSync(taken, "kept");
  const files = await writeOomFiles({
    log,
    pid: 7,
    device: 0,
    mode: 1,
    dir,
    at,
    untilNs: 1764753083997505000,
  });
  const next = fileStamp(new Date(at.getTime() + 1000));
  assert.equal(files.snapshot, `${dir}/oom_snapshot_7_${next}.pickle`);
  assert.equal(files.usage, `${dir}/device_0_memUsageInfo_${next}.csv`);
  assert.equal(Deno.readTextFileSync(taken), "kept");
  assert.equal(
    Deno.readTextFileSync(files.usage),
    [
      "moduleName,curMemSize(MB),memPeakSize(MB)",
      "HAL,4.0000,4.0000",
      "PTA@model@activation,0.5000,2.0000",
      "PTA@model@weight,1.0000,1.0000",
      "",
    ].join("\n"),
  );
  const [c] = await checkSnapshots([files.snapshot]);
  assert.ok(c.ok, c.error);
  // Only pid 7: its one segment, its blocks of 1 MiB and 0.5 MiB in use.
  assert.equal(c.segsum_segments, 1);
  assert.equal(c.allocated, 1.5 * MiB);
  // segment_alloc, 3 allocs, a free of two entries, the oom
  assert.deepEqual(c.trace_entries, [7]);
});
