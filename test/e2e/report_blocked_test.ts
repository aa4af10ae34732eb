/**
 * The watch report is one more file that may fail to be written: what
 * stands in its place is said once, and the daemon and the job go on.
 */
import assert from "node:assert/strict";
import { stompwatch, tempDir, workload } from "./_harness.ts";

Deno.test("a directory where watch_report.json goes is said once and the job still runs", async () => {
  const out = tempDir();
  const report = `${out}/watch_dump/watch_report.json`;
  Deno.mkdirSync(report, { recursive: true, mode: 0o700 });
  const r = await stompwatch(["run", "--output", out, "--", workload("marks")]);
  assert.equal(r.code, 0, r.stderr);
  const said = r.stderr.match(
    /cannot write \S*watch_report\.json: it is a directory; move it away;/g,
  ) ?? [];
  assert.equal(said.length, 1, r.stderr);
  assert.doesNotMatch(r.stderr, /os error/);
  assert.ok(
    Deno.statSync(report).isDirectory,
    "the directory is left as it was",
  );
  // Moved away, the next run writes the report.
  Deno.removeSync(report);
  const next = await stompwatch([
    "run",
    "--output",
    out,
    "--",
    workload("marks"),
  ]);
  assert.equal(next.code, 0, next.stderr);
  assert.ok(Deno.statSync(report).isFile);
});
