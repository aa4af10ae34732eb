/**
 * Only the pump reads rings: HTTP handlers that need fresh state wait for
 * its next round. Driven with a real job under the real hook, against a
 * registry whose pump this test starts and stops.
 */
import assert from "node:assert/strict";
import { HOOK_LIBRARY } from "../../ffi/bindings.ts";
import { DaemonMemoryService } from "../../daemon/memory_service.ts";
import { Registry } from "../../daemon/registry.ts";
import { DaemonWatchService } from "../../daemon/watch_service.ts";
import { DumpWriter } from "../../watch/dump_writer.ts";
import { ServiceError } from "../../watch/types.ts";
import { Spawned, tempDir, workload } from "../e2e/_harness.ts";

Deno.test("POST /watch, POST /marks and GET /processes/{pid}/blocks never read a ring themselves: they wait for the pump's round", async () => {
  const dir = tempDir();
  const ringDir = `${dir}/rings`;
  Deno.mkdirSync(ringDir, { mode: 0o700 });
  const writer = new DumpWriter(`${dir}/watch_dump`);
  const registry = new Registry(ringDir, writer);
  const service = new DaemonWatchService(registry, writer, {
    outputDir: dir,
    ringDir,
    version: "test",
  });
  const memory = new DaemonMemoryService(registry, undefined);
  const gate = `${dir}/go`;
  const job = new Spawned(workload("stomp"), ["--wait-file", gate], {
    LD_PRELOAD: HOOK_LIBRARY,
    STOMPWATCH_RING_DIR: ringDir,
    STOMPWATCH_CHECKSUM: "xxh3",
    ASCEND_LAUNCH_BLOCKING: "1",
  });
  try {
    const [, b] = await job.line(/^stomp: A=0x[0-9a-f]+ B=(0x[0-9a-f]+) C=/);
    await job.line(/^ready$/);
    const pid = job.child.pid;
    const request = {
      pid,
      name: "b",
      addr: BigInt(b),
      length: 256n,
      dumpNums: -1,
      fullContent: false,
    };
    // The pump is not running: the handler finds no process, reads nothing.
    await assert.rejects(service.addWatch(request), (e: ServiceError) => {
      assert.equal(e.kind, "not_found");
      return true;
    });
    assert.equal(registry.processes.size, 0);
    assert.deepEqual(service.listProcesses(), []);
    // Attached (as the pump's scan does), but its ring still unread: the
    // block is not known, and the handler does not go and read it.
    registry.scan();
    const p = registry.processes.get(pid)!;
    await assert.rejects(service.addWatch(request), (e: ServiceError) => {
      assert.equal(e.kind, "not_live");
      return true;
    });
    assert.deepEqual(await memory.mark("step"), [pid]);
    assert.deepEqual((await service.listBlocks(pid, { limit: 10 })).blocks, []);
    assert.equal(p.recordsRead, 0);
    // With the pump running, the same request waits for its round and is taken.
    registry.start();
    const added = await service.addWatch(request);
    assert.equal(added.state, "active");
    assert.ok(p.recordsRead > 0);
    const listed = await service.listBlocks(pid, { limit: 10 });
    assert.ok(listed.blocks.some((x) => BigInt(x.addr) === BigInt(b)));
    Deno.writeTextFileSync(gate, "");
    assert.equal((await job.done).code, 0, job.stderr);
  } finally {
    try {
      job.child.kill();
    } catch { /* already gone */ }
    await registry.stop();
    Deno.removeSync(dir, { recursive: true });
  }
});
