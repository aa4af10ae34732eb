import assert from "node:assert/strict";
import { readMemscopeBytes } from "../../../analysis/memscope_csv/mod.ts";

Deno.test("timestampUs reads nanosecond stamps as exact microseconds and old microsecond stamps as they are", () => {
  const csv = [
    "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr",
    "1,MSTX,Mark,a,1795414314065511680,1,1,0,N/A,",
    "2,MSTX,Mark,b,1746006014162153,1,1,0,N/A,",
    "3,MSTX,Mark,c,N/A,1,1,0,N/A,",
    "",
  ].join("\n");
  const got: number[] = [];
  readMemscopeBytes(new TextEncoder().encode(csv), (r) => {
    got.push(r.timestampUs);
  });
  assert.deepEqual(got, [1795414314065511, 1746006014162153, NaN]);
});
