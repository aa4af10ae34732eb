/**
 * `run`s started together on one output directory share one daemon: the
 * first starts it, the others attach, and it stays until every job that
 * reports to it has ended.
 */
import assert from "node:assert/strict";
import { stompwatch, tempDir, workload } from "./_harness.ts";

Deno.test("three runs started at once on one output directory all run their jobs, traced", async () => {
  const out = tempDir();
  const marker = tempDir();
  const runs = await Promise.all([0, 1, 2].map((i) =>
    stompwatch([
      "run",
      "--output",
      out,
      "--",
      "bash",
      "-c",
      `${workload("stomp")} && touch ${marker}/${i} && exit 7`,
    ])
  ));
  for (const r of runs) {
    assert.equal(r.code, 7, r.stderr);
    assert.doesNotMatch(r.stderr, /already listening|did not answer|untraced/);
  }
  assert.deepEqual(
    [...Deno.readDirSync(marker)].map((e) => e.name).sort(),
    ["0", "1", "2"],
  );
  const attached = runs.filter((r) =>
    /a daemon already serves .*: the job reports to it, as with --daemon .*stompwatch\.sock/
      .test(r.stderr)
  );
  assert.ok(attached.length >= 1, runs.map((r) => r.stderr).join("\n"));
  // Every job's events reached the one event log.
  const log = [...Deno.readDirSync(`${out}/device_0`)].filter((e) =>
    e.name.startsWith("memscope_dump_")
  );
  assert.ok(log.length >= 1);
});
