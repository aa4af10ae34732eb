import assert from "node:assert/strict";
import { readMemscopeBytes } from "../../../analysis/memscope_csv/mod.ts";

Deno.test("timestampSplit gives the seconds and the nine last digits of a stamp, and refuses anything but digits", () => {
  const csv = [
    "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr",
    "1,MSTX,Mark,a,1795414314065511683,1,1,0,N/A,",
    '2,MSTX,Mark,b,"1746006014162153",1,1,0,N/A,',
    "3,MSTX,Mark,c,12,1,1,0,N/A,",
    "4,MSTX,Mark,d,N/A,1,1,0,N/A,",
    "5,MSTX,Mark,e,,1,1,0,N/A,",
    "6,MSTX,Mark,f, 17,1,1,0,N/A,",
    "",
  ].join("\n");
  const got: Array<number[] | false> = [];
  const out = new Float64Array(2);
  readMemscopeBytes(new TextEncoder().encode(csv), (r) => {
    got.push(r.timestampSplit(out) ? [...out] : false);
  });
  assert.deepEqual(got, [
    [1795414314, 65511683],
    [1746006, 14162153],
    [0, 12],
    false,
    false,
    false,
  ]);
});

Deno.test("nameInterned reads a name as name does, quoted or not, and gives the same string for the same bytes", () => {
  const long = "torch._ops.aten.mse_loss_backward.default.with.a.long.tail";
  const csv = [
    "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr",
    `1,OP_LAUNCH,ATEN_END,${long},1,1,1,0,N/A,`,
    `2,OP_LAUNCH,ATEN_END,${long},1,1,1,0,N/A,`,
    '3,MSTX,Mark,"a ""quoted"", name",1,1,1,0,N/A,',
    "4,MSTX,Mark,,1,1,1,0,N/A,",
    "",
  ].join("\n");
  const got: Array<[string, string]> = [];
  readMemscopeBytes(new TextEncoder().encode(csv), (r) => {
    got.push([r.nameInterned, r.name]);
  });
  for (const [interned, plain] of got) assert.equal(interned, plain);
  assert.deepEqual(got.map(([n]) => n), [long, long, 'a "quoted", name', ""]);
});
