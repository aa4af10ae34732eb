/**
 * What a daemon finds in its output directory is kept: event logs and
 * checksum CSVs of earlier jobs are never opened over, the watch report
 * keeps every earlier daemon's watches, and a directory other users can
 * open is refused, not chmodded.
 */
import assert from "node:assert/strict";
import { fileStamp } from "../../analysis/files.ts";
import { checksumCsvName } from "../../watch/dump_names.ts";
import type { WatchReport } from "../../watch/report.ts";
import {
  Spawned,
  STOMPWATCH,
  stompwatch,
  tempDir,
  workload,
} from "./_harness.ts";

const KEEP = "rows of an earlier job\n";

/** Files named for this second and the next few, as an earlier job in the same second would leave them. */
function occupy(dir: string, name: (d: Date) => string): string[] {
  Deno.mkdirSync(dir, { recursive: true });
  const now = Date.now();
  const names = Array.from(
    { length: 5 },
    (_, i) => name(new Date(now + i * 1000)),
  );
  for (const n of names) Deno.writeTextFileSync(`${dir}/${n}`, KEEP);
  return names;
}

Deno.test("a run never opens over the event log or checksum CSV of an earlier job in the same second", async () => {
  const out = tempDir();
  const logs = occupy(
    `${out}/device_0`,
    (d) => `memscope_dump_${fileStamp(d)}.csv`,
  );
  const csvs = occupy(`${out}/watch_dump`, (d) => checksumCsvName(0, d));
  const r = await stompwatch([
    "run",
    "--output",
    out,
    "--watch=Fill:0,Add",
    "--",
    workload("stomp"),
  ]);
  assert.equal(r.code, 0, r.stderr);
  for (const n of logs) {
    assert.equal(Deno.readTextFileSync(`${out}/device_0/${n}`), KEEP, n);
  }
  for (const n of csvs) {
    assert.equal(Deno.readTextFileSync(`${out}/watch_dump/${n}`), KEEP, n);
  }
  const fresh = [...Deno.readDirSync(`${out}/device_0`)].filter((e) =>
    !logs.includes(e.name)
  );
  assert.equal(fresh.length, 1, "the job's rows went to a new file");
  const text = Deno.readTextFileSync(`${out}/device_0/${fresh[0].name}`);
  assert.match(text, /,SYSTEM,PROC_EXIT,/);
});

Deno.test("the watch report of a second run on one output directory keeps the first run's watches", async () => {
  const out = tempDir();
  const run = () =>
    stompwatch([
      "run",
      "--output",
      out,
      "--watch=Fill:0,Add",
      "--",
      workload("stomp"),
    ]);
  const first = await run();
  assert.equal(first.code, 0, first.stderr);
  const second = await run();
  assert.equal(second.code, 0, second.stderr);
  const report: WatchReport = JSON.parse(
    Deno.readTextFileSync(`${out}/watch_dump/watch_report.json`),
  );
  const pids = [...new Set(report.watches.map((w) => w.pid))];
  assert.equal(pids.length, 2, "both runs' watches");
  assert.deepEqual(report.watches.map((w) => w.stomp), [
    false,
    true,
    false,
    true,
  ]);
});

Deno.test("a daemon refuses an output directory others can open and leaves its mode alone", async () => {
  const shared = tempDir();
  Deno.chmodSync(shared, 0o1777);
  const d = new Spawned(STOMPWATCH, ["daemon", "--output", shared]);
  const started = await Promise.race([
    d.done.then(() => false),
    d.line(/listening on/).then(() => true, () => false),
  ]);
  if (started) d.child.kill("SIGTERM");
  const status = await d.done;
  assert.ok(!started, "the daemon must not start");
  const r = { code: status.code, stderr: d.stderr };
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /^stompwatch: Cannot use --output .*: other users can open it \(mode 1777\).*chmod 700/,
  );
  assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  assert.equal(Deno.statSync(shared).mode! & 0o7777, 0o1777);
  assert.deepEqual([...Deno.readDirSync(shared)], [], "nothing made in it");
});

Deno.test("run makes a missing output directory 0700", async () => {
  const out = `${tempDir()}/new/out`;
  const r = await stompwatch(["run", "--output", out, "--", "true"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(Deno.statSync(out).mode! & 0o777, 0o700);
});
