import assert from "node:assert/strict";
import type { AllocEvent } from "../../analysis/events.ts";
import { EventLog } from "../../daemon/event_log.ts";

Deno.test("an event log still names the files it wrote once it is closed", () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_log_" });
  const log = new EventLog(dir, new Date(2026, 10, 23, 6, 0, 0));
  const alloc: AllocEvent = {
    kind: "alloc",
    pid: 4242,
    tid: 4243,
    ts: 1764753083997498270,
    device: 0,
    addr: 0x12c041400000,
    size: 512,
    pool: "HAL",
    result: 0,
    allocationId: 1,
  };
  log.onEvent(alloc);
  log.flush();
  const open = log.files();
  log.close();
  assert.deepEqual(log.files(), open);
  assert.deepEqual(open, [{
    device: 0,
    path: `${dir}/device_0/memscope_dump_20261123060000.csv`,
  }]);
  assert.equal(Deno.readTextFileSync(open[0].path).split("\n").length, 3);
  Deno.removeSync(dir, { recursive: true });
});
