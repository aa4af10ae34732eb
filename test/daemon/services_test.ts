import assert from "node:assert/strict";
import { DaemonMemoryService } from "../../daemon/memory_service.ts";
import { Registry } from "../../daemon/registry.ts";
import { DaemonWatchService } from "../../daemon/watch_service.ts";
import { DumpWriter } from "../../watch/dump_writer.ts";

Deno.test("the services leave the registry's listeners alone: daemon.ts wires them where they can be seen", () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_test_" });
  try {
    const writer = new DumpWriter(`${dir}/watch_dump`);
    const registry = new Registry(dir, writer);
    const before = {
      onAttached: registry.onAttached,
      onFinished: registry.onFinished,
      onTableChange: registry.onTableChange,
      onRound: registry.onRound,
    };
    new DaemonWatchService(registry, writer, {
      outputDir: dir,
      ringDir: dir,
      version: "test",
    });
    new DaemonMemoryService(registry, undefined);
    assert.deepEqual({
      onAttached: registry.onAttached,
      onFinished: registry.onFinished,
      onTableChange: registry.onTableChange,
      onRound: registry.onRound,
    }, before);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("an address beyond 2^53 is quoted exactly in the service's errors", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_test_" });
  try {
    const writer = new DumpWriter(`${dir}/watch_dump`);
    const service = new DaemonWatchService(new Registry(dir, writer), writer, {
      outputDir: dir,
      ringDir: dir,
      version: "test",
    });
    await assert.rejects(
      service.removeWatch({ addr: 0xffffffffffffff01n, length: 1n }),
      /^Error: Cannot remove watch: no live watch overlapping 0xffffffffffffff01 \(\+1 bytes\)/,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
