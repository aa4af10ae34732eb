import assert from "node:assert/strict";
import { nativeChecksum, RING } from "../../ffi/bindings.ts";
import { crc64MsMemScope } from "./crc64_reference.ts";

const text = (s: string) => new TextEncoder().encode(s);

Deno.test("the hook's msMemScope CRC-64 gives the check value b86883e6fa710a9f for 123456789", () => {
  assert.equal(
    nativeChecksum(RING.CHECKSUM_CRC64_MSMEMSCOPE, text("123456789")),
    0xb86883e6fa710a9fn,
  );
  assert.equal(
    nativeChecksum(RING.CHECKSUM_CRC64_MSMEMSCOPE, new Uint8Array(0)),
    0n,
  );
});

Deno.test("the hook's sliced CRC-64 agrees with the byte-at-a-time model at every length", () => {
  const bytes = new Uint8Array(301).map((_, i) => (i * 131 + 7) & 0xff);
  for (const n of [1, 7, 8, 9, 63, 64, 65, 301]) {
    const part = bytes.subarray(0, n);
    assert.equal(
      nativeChecksum(RING.CHECKSUM_CRC64_MSMEMSCOPE, part),
      crc64MsMemScope(part),
      `length ${n}`,
    );
  }
});

Deno.test("the hook's default checksum tells different blocks apart and is stable", () => {
  const a = nativeChecksum(RING.CHECKSUM_XXH3, text("abc"));
  assert.equal(nativeChecksum(RING.CHECKSUM_XXH3, text("abc")), a);
  assert.notEqual(nativeChecksum(RING.CHECKSUM_XXH3, text("abd")), a);
});
