/**
 * The test device runtime's copy engine (ffi/testing/ascendcl_stream.c):
 * asynchronous copies run in order on a worker thread of their stream,
 * synchronisation waits for them, and errors come where a device reports
 * them. Driven through the `streams` workload, which prints what it saw.
 */
import assert from "node:assert/strict";
import { workload } from "../e2e/_harness.ts";

/** Runs `streams <scenario>` without the hook; its `fact value` lines. */
async function facts(scenario: string): Promise<Record<string, string>> {
  const out = await new Deno.Command(workload("streams"), {
    args: [scenario],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return Object.fromEntries(
    text.trim().split("\n").map((l) => l.split(" ") as [string, string]),
  );
}

const SUCCESS = "0";
const INVALID_PARAM = "100000";
const FEATURE_NOT_SUPPORT = "207000";

Deno.test("copies queued on one stream run in the order they were queued: a chain of four arrives whole", async () => {
  const f = await facts("order");
  assert.deepEqual(f, {
    queued: "1",
    synchronized: SUCCESS,
    chain_arrived: "1",
  });
});

Deno.test("a stream's copies run on a worker thread of its own, synchronisation waits for them, and destroying the stream finishes them and ends the thread", async () => {
  const f = await facts("sync");
  assert.deepEqual(f, {
    workers_before: "0",
    queued: SUCCESS,
    workers_queued: "1",
    synchronized: SUCCESS,
    copy_arrived: "1",
    destroyed: SUCCESS,
    destroy_finished_it: "1",
    workers_after: "0",
  });
});

Deno.test("an async copy into pageable host memory is done when the call returns, as CANN documents", async () => {
  const f = await facts("pageable");
  assert.deepEqual(f, { queued: SUCCESS, done_on_return: "1" });
});

Deno.test("aclrtSynchronizeDevice waits for the copies of every stream of the device", async () => {
  const f = await facts("device");
  assert.deepEqual(f, { synchronized: SUCCESS, both_arrived: "1" });
});

Deno.test("an op launched on a stream reads what the copies queued before it wrote", async () => {
  const f = await facts("op");
  assert.deepEqual(f, { launched: SUCCESS, filled_with: "7" });
});

Deno.test("bad arguments fail at the call; a copy that fails on the engine fails the next synchronisation, once", async () => {
  const f = await facts("errors");
  assert.deepEqual(f, {
    null_destination: INVALID_PARAM,
    count_over_max: INVALID_PARAM,
    host_as_device: INVALID_PARAM,
    unknown_stream: INVALID_PARAM,
    sync_unknown_stream: INVALID_PARAM,
    destroy_unknown_stream: INVALID_PARAM,
    free_host_not_page_locked: INVALID_PARAM,
    host_to_host_queued: SUCCESS,
    host_to_host_at_sync: FEATURE_NOT_SUPPORT,
    next_sync: SUCCESS,
    host_to_host_queued_again: SUCCESS,
    host_to_host_at_device_sync: FEATURE_NOT_SUPPORT,
    host_to_host_pageable: FEATURE_NOT_SUPPORT,
    sync_after_pageable: SUCCESS,
  });
});

Deno.test("memory registered with aclrtHostRegister is page-locked until unregistered, and is not aclrtFreeHost's to free", async () => {
  const f = await facts("register");
  assert.deepEqual(f, {
    register: SUCCESS,
    free_host_registered: INVALID_PARAM,
    host_to_host_queued: SUCCESS,
    host_to_host_at_sync: FEATURE_NOT_SUPPORT,
    unregister: SUCCESS,
    unregister_again: INVALID_PARAM,
    host_to_host_unregistered: FEATURE_NOT_SUPPORT,
  });
});

Deno.test("an event covers the copies queued before it was recorded: waiting for it waits for those, and reports a failure behind it at the next event instead", async () => {
  const f = await facts("events");
  assert.deepEqual(f, {
    created: "1",
    sync_unrecorded: SUCCESS,
    record_null: INVALID_PARAM,
    record_unknown_stream: INVALID_PARAM,
    recorded: SUCCESS,
    sync_first: SUCCESS,
    copy_arrived: "1",
    sync_second: FEATURE_NOT_SUPPORT,
    sync_stream_after: SUCCESS,
    recorded_again: SUCCESS,
    sync_again: SUCCESS,
    copy_arrived_again: "1",
    sync_destroyed_stream: SUCCESS,
    destroyed: "1",
  });
});
