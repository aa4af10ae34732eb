/**
 * The hook reads a --watch value with the grammar `run` checks it with
 * (ffi/common/watch_spec.c): a value `run` accepts is one the job watches,
 * whether it came through `run --watch` or was set by hand.
 */
import assert from "node:assert/strict";
import { stompwatch, tempDir, workload } from "../e2e/_harness.ts";

/** The verdict lines `run` prints, without what differs between runs. */
function verdicts(stderr: string): string[] {
  return stderr.split("\n")
    .filter((l) => l.startsWith("stompwatch: watch "))
    .map((l) => l.replace(/\b\d+_\d+_/g, "D_TID_").replace(/pid \d+/g, "pid P"))
    .map((l) => l.replace(/0x[0-9a-f]+/g, "ADDR"));
}

async function runStomp(args: string[], env: Record<string, string> = {}) {
  const r = await stompwatch(
    ["run", "--output", tempDir(), ...args, "--", workload("stomp")],
    env,
  );
  assert.equal(r.code, 0, r.stderr);
  return r;
}

Deno.test("run --watch with the full-width comma finds the stomp, with the verdicts of the ASCII comma", async () => {
  const ascii = await runStomp(["--watch=Fill:0,Add"]);
  const wide = await runStomp(["--watch=Fill:0，Add"]);
  assert.ok(!wide.stderr.includes("ignoring STOMPWATCH_WATCH"), wide.stderr);
  assert.ok(wide.stderr.includes("STOMPED by Copy #1"), wide.stderr);
  assert.equal(verdicts(wide.stderr).length, 2, wide.stderr);
  assert.deepEqual(verdicts(wide.stderr), verdicts(ascii.stderr));
});

Deno.test("a STOMPWATCH_WATCH set by hand with full-width commas is read as run reads it", async () => {
  const ascii = await runStomp([], { STOMPWATCH_WATCH: "Fill:0,Add" });
  const wide = await runStomp([], { STOMPWATCH_WATCH: "Fill:0，Add" });
  assert.ok(wide.stderr.includes("STOMPED by Copy #1"), wide.stderr);
  assert.deepEqual(verdicts(wide.stderr), verdicts(ascii.stderr));
});

Deno.test("a STOMPWATCH_WATCH set by hand that run would refuse is ignored with the reason, once", async () => {
  const r = await runStomp([], { STOMPWATCH_WATCH: "Fill:01，Add" });
  const said = r.stderr.split("\n").filter((l) =>
    l.includes("ignoring STOMPWATCH_WATCH")
  );
  assert.deepEqual(said, [
    "stompwatch: ignoring STOMPWATCH_WATCH: outid must not have leading zeros (form: [start[:outid]],end[,full-content])",
  ]);
  assert.deepEqual(verdicts(r.stderr), []);
});
