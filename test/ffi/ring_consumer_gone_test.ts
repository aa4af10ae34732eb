/**
 * The hook passes through for good once the process that read its ring has
 * ended (the daemon exited or was killed): a heartbeat that moves later, a
 * ring with room, do not make it write again. Only a daemon that still
 * exists (stopped, paused) gets the ring back; test/e2e/daemon_stall_test.ts
 * holds that side.
 */
import assert from "node:assert/strict";
import {
  advanceRing,
  attachRing,
  detachRing,
  heartbeatRing,
  HOOK_LIBRARY,
  type MappedRing,
  RING,
  ringHead,
} from "../../ffi/bindings.ts";
import { eventually, Spawned, tempDir, workload } from "../e2e/_harness.ts";

function header(ring: MappedRing) {
  const v = new DataView(ring.buffer);
  return {
    flags: v.getUint32(RING.H.flags, true),
    dropped: Number(v.getBigUint64(RING.H.droppedEvents, true)),
  };
}

Deno.test("a job whose ring reader has ended passes through for good, even once a heartbeat moves and the ring has room", async () => {
  const dir = tempDir();
  const gates = tempDir();
  const job = new Spawned(workload("stall"), [
    "40000",
    `${gates}/phase1`,
    `${gates}/phase2`,
    "50",
  ], {
    LD_PRELOAD: HOOK_LIBRARY,
    STOMPWATCH_RING_DIR: dir,
    STOMPWATCH_RING_BYTES: String(1 << 20),
  });
  let ring: MappedRing | null = null;
  try {
    await job.line(/^ready$/);
    ring = await eventually(() =>
      attachRing(`${dir}/${job.child.pid}.ring`) ?? undefined
    );
    // The reader that attached is a process that has ended.
    const gone = new Deno.Command("true").spawn();
    await gone.status;
    new DataView(ring.buffer).setInt32(RING.H.consumerPid, gone.pid, true);
    Deno.writeTextFileSync(`${gates}/phase1`, "");
    await job.line(/^phase1 40000$/);
    const before = header(ring);
    assert.ok(before.flags & RING.FLAG_CONSUMER_GONE, `flags ${before.flags}`);
    assert.equal(before.flags & RING.FLAG_STALLED, 0);

    // A reader again: alive, beating, and the whole ring free.
    new DataView(ring.buffer).setInt32(RING.H.consumerPid, Deno.pid, true);
    heartbeatRing(ring);
    const head = ringHead(ring);
    advanceRing(ring, head);
    Deno.writeTextFileSync(`${gates}/phase2`, "");
    const emitted = Number((await job.line(/^emitted (\d+)$/))[1]);
    assert.equal((await job.done).code, 0, job.stderr);
    assert.equal(
      ringHead(ring),
      head,
      "nothing written after the reader ended",
    );
    // The start mark and phase 1 came before; the rest, and PROC_EXIT, were counted.
    assert.equal(
      header(ring).dropped - before.dropped,
      emitted - 1 - 40000 + 1,
    );
    assert.match(
      job.stderr,
      /the daemon stopped reading events; the job goes on untraced/,
    );
  } finally {
    Deno.writeTextFileSync(`${gates}/phase1`, "");
    Deno.writeTextFileSync(`${gates}/phase2`, "");
    await job.done;
    if (ring) detachRing(ring);
    Deno.removeSync(dir, { recursive: true });
    Deno.removeSync(gates, { recursive: true });
  }
});
