import assert from "node:assert/strict";
import { fileStamp, writeAll } from "../../analysis/files.ts";

Deno.test("fileStamp pads every field to its width", () => {
  assert.equal(fileStamp(new Date(2026, 10, 20, 23, 17, 33)), "20261120231733");
  assert.equal(fileStamp(new Date(2027, 8, 9, 0, 0, 0)), "20270909000000");
});

Deno.test("writeAll calls again until a file that takes a few bytes at a time has them all", () => {
  const taken: number[] = [];
  const trickle = {
    writeSync(bytes: Uint8Array): number {
      const n = Math.min(3, bytes.length);
      taken.push(...bytes.subarray(0, n));
      return n;
    },
  } as unknown as Deno.FsFile;
  writeAll(trickle, new TextEncoder().encode("1,MALLOC,HAL\n"));
  assert.equal(
    new TextDecoder().decode(new Uint8Array(taken)),
    "1,MALLOC,HAL\n",
  );
});

Deno.test("writeAll refuses a file system that takes no bytes instead of looping forever", () => {
  const stuck = { writeSync: () => 0 } as unknown as Deno.FsFile;
  assert.throws(() => writeAll(stuck, new Uint8Array(4)), /accepted no bytes/);
});
