import assert from "node:assert/strict";
import {
  binFileName,
  type BinNameParts,
  checksumCsvName,
  sanitizeNamePart,
  tensorInfo,
} from "../../watch/dump_names.ts";

const parts: BinNameParts = {
  device: 0,
  tid: 1234,
  op: "torch._ops.aten.add.Tensor",
  callCount: 3,
  name: "mynorm",
  outid: 0,
  phase: "after",
};

Deno.test("binFileName follows the seed document's pattern", () => {
  assert.equal(
    binFileName(parts),
    "0_1234_torch._ops.aten.add.Tensor_3-mynorm_0_after.bin",
  );
  assert.equal(
    binFileName({ ...parts, device: 7, outid: 2, phase: "before" }),
    "7_1234_torch._ops.aten.add.Tensor_3-mynorm_2_before.bin",
  );
});

Deno.test("binFileName turns every slash in op and watch names into a dot", () => {
  assert.equal(
    binFileName({
      ...parts,
      op: "0/0_ElewiseOperation/0_AddI32Kernel",
      name: "token0/layer0/module0/op0",
    }),
    "0_1234_0.0_ElewiseOperation.0_AddI32Kernel_3-token0.layer0.module0.op0_0_after.bin",
  );
});

Deno.test("binFileName never yields a name that leaves the dump directory", () => {
  const name = binFileName({ ...parts, op: "../../etc", name: "/x\u0000y" });
  assert.equal(name, "0_1234_......etc_3-.x.y_0_after.bin");
  assert.ok(!name.includes("/") && !name.includes("\u0000"));
});

Deno.test("sanitizeNamePart replaces control characters and keeps the rest", () => {
  assert.equal(sanitizeNamePart("a\nb\u007fc-d_e:f"), "a.b.c-d_e:f");
});

Deno.test("tensorInfo is the .bin name without its extension", () => {
  assert.equal(`${tensorInfo(parts)}.bin`, binFileName(parts));
});

Deno.test("binFileName refuses negative, fractional and unsafe numbers", () => {
  for (
    const bad of [
      { device: -1 },
      { tid: 1.5 },
      { callCount: Number.MAX_SAFE_INTEGER + 1 },
      { outid: NaN },
    ]
  ) {
    assert.throws(
      () => binFileName({ ...parts, ...bad }),
      /Cannot name dump file: \w+ .* is not a non-negative integer/,
    );
  }
});

Deno.test("binFileName refuses a name longer than 255 bytes", () => {
  assert.throws(
    () => binFileName({ ...parts, name: "n".repeat(300) }),
    /is longer than 255 bytes/,
  );
});

Deno.test("binFileName fits the longest op and watch name the edges accept", () => {
  const name = binFileName({
    device: 4294967295,
    tid: 4294967295,
    op: "o".repeat(95),
    callCount: Number.MAX_SAFE_INTEGER,
    name: "n".repeat(96),
    outid: 2147483647,
    phase: "before",
  });
  assert.ok(new TextEncoder().encode(name).length <= 255);
});

Deno.test("checksumCsvName stamps the device and local time", () => {
  assert.equal(
    checksumCsvName(3, new Date(2026, 0, 2, 3, 4, 5)),
    "watch_dump_data_check_sum_3_20260102030405.csv",
  );
  assert.throws(() => checksumCsvName(-1), /device -1/);
});
