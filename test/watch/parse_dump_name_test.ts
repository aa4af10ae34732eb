import assert from "node:assert/strict";
import { binFileName, type BinNameParts } from "../../watch/dump_names.ts";
import {
  binNameReadings,
  parseBinFileName,
  parseChecksumCsvName,
} from "../../watch/parse_dump_name.ts";

Deno.test("parseBinFileName reads the real tool's example back", () => {
  assert.deepEqual(
    parseBinFileName("0_1234_torch._ops.aten.add.Tensor_3-mynorm_0_after.bin"),
    {
      device: 0,
      tid: 1234,
      op: "torch._ops.aten.add.Tensor",
      callCount: 3,
      name: "mynorm",
      outid: 0,
      phase: "after",
      ambiguous: false,
    },
  );
});

Deno.test("parseBinFileName undoes binFileName for names with _ and - in them", () => {
  const cases: BinNameParts[] = [
    {
      device: 1,
      tid: 9,
      op: "0.0_ElewiseOperation",
      callCount: 12,
      name: "my-norm_out",
      outid: 4,
      phase: "before",
    },
    {
      device: 0,
      tid: 5,
      op: "my-op_x",
      callCount: 0,
      name: "w_7",
      outid: 0,
      phase: "after",
    },
    {
      device: 2,
      tid: 3,
      op: "Copy",
      callCount: 1,
      name: "Fill",
      outid: 10,
      phase: "after",
    },
  ];
  for (const parts of cases) {
    assert.deepEqual(parseBinFileName(binFileName(parts)), {
      ...parts,
      ambiguous: false,
    });
  }
});

Deno.test("parseBinFileName reports a name that reads two ways as ambiguous", () => {
  const file = "0_7_Fill_3-a_1-b_0_after.bin";
  assert.deepEqual(
    binNameReadings(file).map((r) => [r.op, r.callCount, r.name]),
    [["Fill", 3, "a_1-b"], ["Fill_3-a", 1, "b"]],
  );
  const guess = parseBinFileName(file);
  assert.equal(guess?.op, "Fill");
  assert.equal(guess?.ambiguous, true);
});

Deno.test("parseBinFileName settles an ambiguous name with the daemon's watch names", () => {
  const file = "0_7_Fill_3-a_1-b_0_after.bin";
  const known = parseBinFileName(file, { names: ["b"] });
  assert.deepEqual(
    [known?.op, known?.callCount, known?.name, known?.ambiguous],
    ["Fill_3-a", 1, "b", false],
  );
  const sanitised = parseBinFileName("0_7_Fill_3-a.x_0_after.bin", {
    names: ["a/x"],
  });
  assert.equal(sanitised?.name, "a.x");
});

Deno.test("parseBinFileName returns null for anything that is not a .bin dump name", () => {
  for (
    const file of [
      "watch_dump_data_check_sum_0_20260102030405.csv",
      "0_1_Mul_2-w_0_during.bin",
      "0_1_Mul_2-w_0_after.bin.tmp",
      "x_1_Mul_2-w_0_after.bin",
      "0_1_Mul-w_0_after.bin",
      "0_1__2-w_0_after.bin",
      "0_1_Mul_2-_0_after.bin",
      "0_1_Mul_2-w_after.bin",
      "99999999999999999999_1_Mul_2-w_0_after.bin",
      "..",
      "",
    ]
  ) {
    assert.equal(parseBinFileName(file), null, file);
  }
});

Deno.test("parseChecksumCsvName reads device and timestamp", () => {
  assert.deepEqual(
    parseChecksumCsvName("watch_dump_data_check_sum_1_20260102030405.csv"),
    { device: 1, timestamp: "20260102030405" },
  );
  assert.equal(
    parseChecksumCsvName("watch_dump_data_check_sum_1_2026.csv"),
    null,
  );
  assert.equal(parseChecksumCsvName("watch_report.json"), null);
});
