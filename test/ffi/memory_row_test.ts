import assert from "node:assert/strict";
import { writeEventRow } from "../../analysis/event_log_rows.ts";
import type { TracedEvent } from "../../analysis/events.ts";
import { RowWriter } from "../../analysis/row_writer.ts";
import { MEMORY_ROW_ROOM, writeMemoryRow } from "../../ffi/bindings.ts";

const decoder = new TextDecoder();
const POOL = { HAL: 0, HOST: 1, PTA: 2 } as const;

function native(
  e: TracedEvent & { kind: "alloc" | "free" },
  id: number,
  used: number,
) {
  const out = new Uint8Array(MEMORY_ROW_ROOM + 8);
  const end = writeMemoryRow(out, 8, {
    event: e.kind === "free" ? 1 : e.result === 0 ? 0 : 2,
    pool: POOL[e.pool],
    id,
    ts: e.ts,
    pid: e.pid,
    tid: e.tid,
    device: e.device,
    addr: e.addr,
    allocationId: e.allocationId,
    size: e.size,
    used,
    result: e.result,
  });
  return decoder.decode(out.subarray(8, end));
}

function reference(e: TracedEvent, id: number, used: number) {
  const w = new RowWriter();
  assert.ok(writeEventRow(w, id, e, used));
  return decoder.decode(w.view());
}

Deno.test("native MALLOC, FREE and OOM_DETAIL rows are byte for byte the rows of writeEventRow", () => {
  const base = { pid: 4242, tid: 4243, ts: 1764753083997498270, device: 0 };
  const events: Array<TracedEvent & { kind: "alloc" | "free" }> = [
    {
      ...base,
      kind: "alloc",
      addr: 0x12c041400000,
      size: 512,
      pool: "HAL",
      result: 0,
      allocationId: 3,
    },
    {
      ...base,
      kind: "free",
      addr: 0x12c041400000,
      size: 512,
      pool: "HAL",
      result: 0,
      allocationId: 3,
    },
    {
      ...base,
      kind: "alloc",
      addr: 0,
      size: 2 ** 40,
      pool: "HAL",
      result: 207001,
      allocationId: 0,
    },
    {
      ...base,
      device: -1,
      kind: "alloc",
      addr: 16,
      size: 1,
      pool: "HOST",
      result: 0,
      allocationId: 1,
    },
    {
      ...base,
      device: 7,
      kind: "alloc",
      addr: 2 ** 53 - 1,
      size: 999999999999999,
      pool: "PTA",
      result: 0,
      allocationId: 2 ** 40,
    },
    {
      ...base,
      ts: 0,
      pid: 1,
      tid: 2 ** 32 - 1,
      kind: "free",
      addr: 1,
      size: 0,
      pool: "PTA",
      result: 0,
      allocationId: 0,
    },
    {
      ...base,
      ts: 1e15,
      kind: "alloc",
      addr: 0x1000,
      size: 100000000,
      pool: "HAL",
      result: 0,
      allocationId: 99999999,
    },
  ];
  for (const [i, e] of events.entries()) {
    for (
      const [id, used] of [[1, 0], [10 ** i, 2 ** 33 + i], [2 ** 53, 12345678]]
    ) {
      assert.equal(native(e, id, used), reference(e, id, used));
    }
  }
});
