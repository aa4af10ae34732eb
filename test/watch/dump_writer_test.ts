import assert from "node:assert/strict";
import type { BinNameParts } from "../../watch/dump_names.ts";
import { DumpWriter } from "../../watch/dump_writer.ts";
import { IoProblems } from "../../watch/io_problems.ts";

const parts: BinNameParts = {
  device: 0,
  tid: 4242,
  op: "Mul",
  callCount: 1,
  name: "w",
  outid: 0,
  phase: "after",
};

function dump(writer: DumpWriter, pid: number, bytes: number[]): string {
  writer.appendContent(pid, 1, new Uint8Array(bytes));
  return writer.finishContent(pid, 1, parts);
}

Deno.test("DumpWriter never replaces an earlier run's dump of the same name: a later one takes the next free name, and GET /dumps lists that name", () => {
  const dir = Deno.makeTempDirSync();
  const problems = new IoProblems(() => {});
  // Two runs on one OUT whose jobs had the same tid.
  const first = new DumpWriter(dir, { problems });
  assert.equal(dump(first, 100, [1]), "0_4242_Mul_1-w_0_after.bin");
  first.close();
  const second = new DumpWriter(dir, { problems });
  assert.equal(dump(second, 200, [2, 2]), "0_4242_Mul_1-w_0_after.1.bin");
  assert.equal(dump(second, 300, [3]), "0_4242_Mul_1-w_0_after.2.bin");
  second.close();
  assert.deepEqual(
    [...Deno.readFileSync(`${dir}/0_4242_Mul_1-w_0_after.bin`)],
    [1],
    "the first run's dump is untouched",
  );
  assert.deepEqual(
    [...Deno.readFileSync(`${dir}/0_4242_Mul_1-w_0_after.1.bin`)],
    [2, 2],
  );
  assert.deepEqual(
    second.list({}).map((d) => [d.file, d.pid, d.bytes]),
    [["0_4242_Mul_1-w_0_after.1.bin", 200, 2], [
      "0_4242_Mul_1-w_0_after.2.bin",
      300,
      1,
    ]],
  );
  assert.deepEqual(
    [...Deno.readDirSync(dir)].filter((e) => e.name.startsWith(".")),
    [],
    "no part file is left",
  );
  assert.deepEqual(problems.list(), []);
});
