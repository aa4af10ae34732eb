/**
 * A gap in a process's events (its daemon did not read, the hook passed
 * through) reaches the watches that were live through it: their info says
 * so, so that a verdict without changes is not taken for a clean one.
 * Driven with a real job under the real hook; the test's own registry is
 * the daemon, and it "stalls" by not pumping.
 */
import assert from "node:assert/strict";
import { HOOK_LIBRARY } from "../../ffi/bindings.ts";
import { Registry } from "../../daemon/registry.ts";
import { DumpWriter } from "../../watch/dump_writer.ts";
import { watchInfo } from "../../watch/watch_book.ts";
import { eventually, Spawned, tempDir, workload } from "../e2e/_harness.ts";

Deno.test("a watch live while the daemon did not read shows gaps: 1, and the process lists the gap with the events it lost", async () => {
  const dir = tempDir();
  const ringDir = `${dir}/rings`;
  Deno.mkdirSync(ringDir, { mode: 0o700 });
  const writer = new DumpWriter(`${dir}/watch_dump`);
  const registry = new Registry(ringDir, writer);
  const job = new Spawned(workload("stall"), [
    "40000",
    `${dir}/phase1`,
    `${dir}/phase2`,
  ], {
    LD_PRELOAD: HOOK_LIBRARY,
    STOMPWATCH_RING_DIR: ringDir,
    STOMPWATCH_RING_BYTES: String(1 << 20),
  });
  try {
    await job.line(/^ready$/);
    const p = await eventually(() => {
      registry.pumpOnce();
      return registry.processes.get(job.child.pid);
    });
    const watch = p.book.add({
      pid: p.pid,
      name: "through",
      addr: 0x100000000n,
      length: 4096n,
      dumpNums: -1,
      fullContent: false,
    });
    const after = p.book.add({
      pid: p.pid,
      name: "after",
      addr: 0x100000000n,
      length: 4096n,
      dumpNums: -1,
      fullContent: false,
    });
    p.book.remove((w) => w === after); // ended before the gap
    Deno.writeTextFileSync(`${dir}/phase1`, "");
    await job.line(/^phase1 40000$/); // not pumped: the hook passed through
    Deno.writeTextFileSync(`${dir}/phase2`, "");
    await eventually(() => {
      registry.pumpOnce();
      return p.finished || undefined;
    });
    assert.equal(watchInfo(watch).gaps, 1);
    assert.equal(watchInfo(after).gaps, undefined);
    assert.equal(p.gaps.length, 1, JSON.stringify(p.gaps));
    assert.ok(p.gaps[0].lostEvents > 0);
    assert.equal(p.gaps[0].lostEvents, p.droppedEvents());
  } finally {
    Deno.writeTextFileSync(`${dir}/phase1`, "");
    Deno.writeTextFileSync(`${dir}/phase2`, "");
    await job.done;
    await registry.stop();
    writer.close();
    Deno.removeSync(dir, { recursive: true });
  }
});
