import assert from "node:assert/strict";
import { writeEventRow } from "../../analysis/memscope_csv/mod.ts";
import type {
  AllocEvent,
  FreeEvent,
  TracedEvent,
} from "../../analysis/events.ts";
import { RowWriter } from "../../analysis/memscope_csv/mod.ts";
import { fillMemoryRow } from "../../daemon/event_log.ts";
import {
  MEMORY_ROW_ROOM,
  type MemoryRow,
  writeMemoryRow,
} from "../../ffi/bindings.ts";

const decoder = new TextDecoder();
function native(e: AllocEvent | FreeEvent, id: number, used: number) {
  const out = new Uint8Array(MEMORY_ROW_ROOM + 8);
  const row = fillMemoryRow({} as MemoryRow, e, id, used);
  return decoder.decode(out.subarray(8, writeMemoryRow(out, 8, row)));
}

function reference(e: TracedEvent, id: number, used: number) {
  const w = new RowWriter();
  assert.ok(writeEventRow(w, id, e, used));
  return decoder.decode(w.view());
}

Deno.test("native MALLOC, FREE and OOM_DETAIL rows are byte for byte the rows of writeEventRow", () => {
  const base = { pid: 4242, tid: 4243, ts: 1764753083997498270, device: 0 };
  const events: Array<AllocEvent | FreeEvent> = [
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
