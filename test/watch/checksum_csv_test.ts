import assert from "node:assert/strict";
import {
  CHECKSUM_CSV_HEADER,
  checksumCsvRow,
  formatChecksum,
} from "../../watch/checksum_csv.ts";
import type { BinNameParts } from "../../watch/dump_names.ts";

const parts: BinNameParts = {
  device: 0,
  tid: 1234,
  op: "Mul",
  callCount: 2,
  name: "w",
  outid: 0,
  phase: "before",
};

Deno.test("the checksum CSV header is exactly the real tool's", () => {
  assert.equal(CHECKSUM_CSV_HEADER, "Tensor info,Check data sum");
});

Deno.test("formatChecksum prints 16 lowercase hex digits", () => {
  assert.equal(formatChecksum(0n), "0000000000000000");
  assert.equal(formatChecksum(0xb86883e6fa710a9fn), "b86883e6fa710a9f");
  assert.equal(formatChecksum((1n << 64n) - 1n), "ffffffffffffffff");
});

Deno.test("formatChecksum refuses values outside 64 unsigned bits", () => {
  assert.throws(() => formatChecksum(-1n), /does not fit in 64 unsigned bits/);
  assert.throws(() => formatChecksum(1n << 64n), /does not fit/);
});

Deno.test("checksumCsvRow puts the .bin name without extension first", () => {
  assert.equal(
    checksumCsvRow(parts, 0xabcn),
    "0_1234_Mul_2-w_0_before,0000000000000abc",
  );
});

Deno.test("checksumCsvRow quotes a first column holding a comma or a quote", () => {
  assert.equal(
    checksumCsvRow({ ...parts, name: 'a,"b"' }, 1n),
    '"0_1234_Mul_2-a,""b""_0_before",0000000000000001',
  );
});
