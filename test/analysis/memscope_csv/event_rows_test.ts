import assert from "node:assert/strict";
import { writeEventRow } from "../../../analysis/memscope_csv/mod.ts";
import type { TracedEvent } from "../../../analysis/events.ts";
import { putInt, RowWriter } from "../../../analysis/memscope_csv/mod.ts";

const base = { pid: 42, tid: 43, ts: 1764753083997498270, device: 1 };

function row(e: TracedEvent, used = 0): string {
  const w = new RowWriter(8);
  assert.ok(writeEventRow(w, 9, e, used));
  return new TextDecoder().decode(w.view());
}

Deno.test("a MALLOC row has the 0x%016x Ptr and the allocation_id/addr/size/used Attr", () => {
  assert.equal(
    row({
      ...base,
      kind: "alloc",
      addr: 0x12c041400000,
      size: 512,
      pool: "HAL",
      result: 0,
      allocationId: 3,
    }, 2048),
    '9,MALLOC,HAL,N/A,1764753083997498368,42,43,1,0x000012c041400000,"{allocation_id:3,addr:0x000012c041400000,size:512,used:2048}",,\n',
  );
});

Deno.test("a failed allocation is an OOM_DETAIL row with the size asked, the error and the device's free bytes", () => {
  assert.equal(
    row({
      ...base,
      kind: "alloc",
      addr: 4096,
      size: 1 << 30,
      pool: "HAL",
      result: 207001,
      allocationId: 0,
    }, 5),
    '9,OOM_DETAIL,HAL,N/A,1764753083997498368,42,43,1,N/A,"{size:1073741824,error:207001,device_free:4096,used:5}",,\n',
  );
});

Deno.test("a failed free writes no row", () => {
  const w = new RowWriter();
  const e: TracedEvent = {
    ...base,
    kind: "free",
    addr: 1,
    pool: "HAL",
    result: 1,
    size: 0,
    allocationId: 0,
  };
  assert.equal(writeEventRow(w, 1, e, 0), false);
  assert.equal(w.length, 0);
});

Deno.test("mark messages are CSV-escaped and never start a formula", () => {
  const mark = (message: string) => row({ ...base, kind: "mark", message });
  assert.match(mark("step"), /^9,MSTX,Mark,step,/);
  assert.match(mark('a,"b"'), /^9,MSTX,Mark,"a,""b""",/);
  for (const c of ["=", "+", "-", "@"]) {
    assert.match(mark(`${c}cmd`), new RegExp(`^9,MSTX,Mark,'\\${c}cmd,`));
  }
  assert.match(mark("=a,b"), /^9,MSTX,Mark,"'=a,b",/);
  assert.match(mark("步骤"), /^9,MSTX,Mark,步骤,/);
});

Deno.test("ops are KERNEL_LAUNCH rows named after the op; host rows say N/A or cpu", () => {
  assert.equal(
    row({
      ...base,
      device: -1,
      kind: "op",
      name: "Add",
      result: 0,
    }),
    "9,KERNEL_LAUNCH,KERNEL_LAUNCH,Add,1764753083997498368,42,43,N/A,N/A,,,\n",
  );
  assert.match(
    row({
      ...base,
      device: -1,
      kind: "alloc",
      addr: 16,
      size: 1,
      pool: "HOST",
      result: 0,
      allocationId: 1,
    }),
    /^9,MALLOC,HOST,N\/A,\d+,42,43,cpu,0x0000000000000010,/,
  );
});

Deno.test("range rows carry the range id; a range end is named as the real tool names it", () => {
  assert.match(
    row({ ...base, kind: "range_start", id: 5, message: "step start" }),
    /^9,MSTX,Range_start,step start,\d+,42,43,1,N\/A,"\{range_id:5\}",,\n$/,
  );
  assert.match(
    row({ ...base, kind: "range_end", id: 5 }),
    /^9,MSTX,Range_end,Range end from id 5,\d+,42,43,1,N\/A,"\{range_id:5\}",,\n$/,
  );
});

Deno.test("putInt writes integers exactly, small and past 2^53", () => {
  const w = new RowWriter(1);
  for (
    const n of [
      0,
      7,
      10,
      99,
      100,
      999,
      1000,
      9999,
      10000,
      99999999,
      100000000,
      2147483647,
      2147483648,
      123456789012345,
      999999999999999,
      1e15,
      1764753083997498368,
      1764753083000000256,
      1e18,
    ]
  ) {
    w.clear();
    w.length = putInt(w.room(21), 0, n);
    assert.equal(new TextDecoder().decode(w.view()), BigInt(n).toString());
  }
  w.clear();
  w.length = putInt(w.room(21), 0, -12);
  assert.equal(new TextDecoder().decode(w.view()), "-12");
});
