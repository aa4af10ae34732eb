/**
 * A watched block larger than one chunk is copied in chunks, the copies of
 * the next few overlapping the hashing of each (ffi/hook/staged_copy.c):
 * the checksums and the dumps must be those of the whole block's bytes,
 * as if it had been copied in one piece, whatever the block's size, and
 * whether the runtime lets the hook queue several chunks ahead (events) or
 * one.
 */
import assert from "node:assert/strict";
import {
  checksumRows,
  floats,
  stompwatch,
  tempDir,
  workload,
} from "./_harness.ts";
import { nativeChecksum, RING } from "../../ffi/bindings.ts";

/** Several chunks of each size the hook uses (1 MiB for checksums, a
 * quarter of the ring up to 4 MiB for full content) and a ragged tail: a
 * float and one byte more. */
const SIZE = (5 << 20) + 17;

/** The block bench_dump watches: zeros, then Fill's floats of 1.0. */
function before(): Uint8Array {
  return new Uint8Array(SIZE);
}
function after(): Uint8Array {
  const bytes = new Uint8Array(SIZE);
  bytes.set(floats(Math.floor(SIZE / 4), 1));
  return bytes;
}

/** The test runtime without events (ffi/testing/lacking.map). */
const LACKING = new URL("../../ffi/build/testing/lacking", import.meta.url)
  .pathname;

async function runDump(
  args: string[],
  env: Record<string, string> = {},
): Promise<string> {
  const out = tempDir();
  const r = await stompwatch(
    [
      "run",
      "--output",
      out,
      ...args,
      "--",
      workload("bench_dump"),
      `${SIZE}B`,
      "1",
    ],
    { STOMPWATCH_TEST_DEVICE_BYTES: String(16 << 20), ...env },
  );
  assert.equal(r.code, 0, r.stderr);
  return `${out}/watch_dump`;
}

const hex = (n: bigint) => n.toString(16).padStart(16, "0");

for (
  const [flag, algo] of [
    ["xxh3", RING.CHECKSUM_XXH3],
    ["crc64-msmemscope", RING.CHECKSUM_CRC64_MSMEMSCOPE],
  ] as const
) {
  for (
    const [runtime, env] of [["", {}], [" without events", {
      LD_LIBRARY_PATH: LACKING,
    }]] as const
  ) {
    Deno.test(`the ${flag} checksums of a block of many chunks and a ragged tail are those of its whole bytes, on a runtime${runtime}`, async () => {
      const dir = await runDump(
        ["--checksum", flag, "--watch=Fill:0,Fill"],
        env,
      );
      const rows = new Map(
        checksumRows(dir).map((
          [info, sum],
        ) => [info.replace(/^0_\d+_/, ""), sum]),
      );
      assert.deepEqual(Object.fromEntries(rows), {
        "Fill_1-Fill_0_before": hex(nativeChecksum(algo, before())),
        "Fill_1-Fill_0_after": hex(nativeChecksum(algo, after())),
      });
    });
  }
}

Deno.test("full-content dumps of a block of many chunks and a ragged tail hold its exact bytes", async () => {
  const dir = await runDump(["--watch=Fill:0,Fill,full-content"]);
  const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
  const bins = names.filter((n) => n.endsWith(".bin"));
  assert.equal(bins.length, 2, names.join(" "));
  const [afterBin, beforeBin] = bins; // "after" sorts first
  assert.ok(afterBin.endsWith("Fill_1-Fill_0_after.bin"), afterBin);
  assert.ok(Deno.readFileSync(`${dir}/${beforeBin}`).every((b) => b === 0));
  assert.deepEqual(Deno.readFileSync(`${dir}/${afterBin}`), after());
});
