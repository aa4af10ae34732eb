/**
 * A runtime that lacks some of the symbols the hook resolves (as a real
 * CANN may): the hook names each missing one once on stderr, answers calls
 * to a missing function with an error code, and everything else keeps
 * working, watches included. The test runtime built without
 * aclopCompileAndExecute, aclrtMallocCached, aclrtGetDevice and the events
 * (ffi/testing/lacking.map) stands in for it.
 */
import assert from "node:assert/strict";
import { stompwatch, tempDir, workload } from "../e2e/_harness.ts";

const LACKING = new URL("../../ffi/build/testing/lacking", import.meta.url)
  .pathname;
const MISSING = [
  "aclopCompileAndExecute",
  "aclrtMallocCached",
  "aclrtGetDevice",
];

async function runLacking(args: string[], job: string) {
  const r = await stompwatch(
    ["run", "--output", tempDir(), ...args, "--", workload(job)],
    { LD_LIBRARY_PATH: LACKING },
  );
  assert.equal(r.code, 0, r.stderr);
  return r;
}

/** How often stderr names `symbol` as missing. */
function times(stderr: string, symbol: string): number {
  return stderr.split("\n").filter((l) =>
    l.startsWith(`stompwatch: the device runtime has no ${symbol};`)
  ).length;
}

Deno.test("each symbol the runtime lacks is named once, however many threads call at once, and its calls fail with an error code", async () => {
  const r = await runLacking([], "lacking");
  for (const symbol of MISSING) {
    assert.equal(times(r.stderr, symbol), 1, `${symbol} in:\n${r.stderr}`);
  }
  assert.equal(times(r.stderr, "aclrtMalloc"), 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split("\n"), [
    "aclrtMallocCached 100000",
    "aclrtMalloc 0",
    "aclopCompileAndExecute 100000",
    "aclopExecuteV2 0",
    "done",
  ]);
});

Deno.test("a runtime that lacks symbols the job does not use still has its stomp found, and names only the ones the hook calls itself", async () => {
  const r = await runLacking(["--watch=Fill:0,Add"], "stomp");
  assert.ok(r.stderr.includes("STOMPED by Copy #1"), r.stderr);
  // An interposed function is named only when a call finds it missing (its
  // library may yet be dlopened); the hook's own calls at once.
  for (const own of ["aclrtGetDevice", "aclrtRecordEvent"]) {
    assert.equal(times(r.stderr, own), 1, r.stderr);
  }
  assert.equal(times(r.stderr, "aclopCompileAndExecute"), 0, r.stderr);
  assert.equal(times(r.stderr, "aclrtMallocCached"), 0, r.stderr);
});

Deno.test("a runtime dlopened after the hook has made calls is still found, and nothing is named missing", async () => {
  const out = tempDir();
  const r = await stompwatch([
    "run",
    "--output",
    out,
    "--",
    workload("late_runtime"),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stderr.includes("has no"), r.stderr);
  assert.ok(!r.stderr.includes("no device runtime"), r.stderr);
  assert.deepEqual(r.stdout.trim().split("\n"), [
    "aclrtSetDevice 0",
    "aclrtMalloc 0",
    "aclrtFree 0",
    "done",
  ]);
  // The hook saw the calls: the allocation is in the job's event log.
  const log = [...Deno.readDirSync(`${out}/device_0`)]
    .map((e) => Deno.readTextFileSync(`${out}/device_0/${e.name}`)).join("");
  assert.match(log, /,MALLOC,HAL,/);
  assert.match(log, /,MSTX,Mark,before the runtime,/);
});

Deno.test("an op library dlopened after the job's first ACL call has its op forwarded, and the op is not named missing", async () => {
  const out = tempDir();
  const r = await stompwatch(
    ["run", "--output", out, "--", workload("late_op_compiler")],
    { LD_LIBRARY_PATH: LACKING },
  );
  assert.equal(r.code, 0, r.stderr);
  // (The lacking runtime's aclrtGetDevice is named: the hook calls it itself.)
  assert.equal(times(r.stderr, "aclopCompileAndExecute"), 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split("\n"), [
    "aclrtSetDevice 0",
    "aclrtMalloc 0",
    "aclopCompileAndExecute 0",
    "filled 1",
    "aclrtFree 0",
    "done",
  ]);
  // Forwarded through the hook: the op is in the job's event log.
  const log = [...Deno.readDirSync(`${out}/device_0`)]
    .map((e) => Deno.readTextFileSync(`${out}/device_0/${e.name}`)).join("");
  assert.match(log, /,KERNEL_LAUNCH,KERNEL_LAUNCH,Fill,/);
});
