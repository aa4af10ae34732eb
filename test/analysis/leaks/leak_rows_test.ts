import assert from "node:assert/strict";
import {
  LeakRows,
  PtrKeys,
  replayWindows,
} from "../../../analysis/leaks/_leak_rows.ts";
import { leakReplayWindows } from "../../../ffi/bindings.ts";

Deno.test("a Ptr key made from 16 hex digits is spelled back as those digits, at every byte's edge", () => {
  const keys = [0, 1, 0xff, 0x100, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32];
  keys.push(2 ** 52, 2 ** 53 - 1, 0x0000124100000000, 0x00001240c0000000);
  for (let bits = 1; bits <= 53; bits++) {
    keys.push(2 ** bits - 1, 2 ** (bits - 1) + 0x5a5a5a % 2 ** (bits - 1));
  }
  for (const key of keys) {
    assert.equal(
      PtrKeys.text(key),
      `0x${key.toString(16).padStart(16, "0")}`,
      String(key),
    );
  }
  // Python's hex() (value + 0.5) and plain decimal (-(value + 1)) as before.
  assert.equal(PtrKeys.text(0x1000 + 0.5), "0x1000");
  assert.equal(PtrKeys.text(-(4096 + 1)), "4096");
  assert.equal(PtrKeys.text(-0.5), undefined);
});

Deno.test("rows reserved at once hold what is pushed, and never more than the budget", () => {
  const rows = new LeakRows(5000, 4);
  rows.push(1, 0, 7, 8, 9, 10, 11);
  rows.reserve(3000);
  assert.ok(rows.id.length >= 3001);
  for (let i = 0; i < 6000; i++) rows.push(1, 1, i, i + 1, i + 2, i + 3, i + 4);
  assert.equal(rows.length, 5000);
  assert.deepEqual(
    [rows.id[0], rows.ptr[0], rows.line[0], rows.id[4999], rows.device[4999]],
    [7, 8, 11, 4998, 1],
  );
  rows.reserve(10_000);
  assert.equal(rows.id.length, 5000);
  // Room near the budget: doubling would pass it.
  const near = new LeakRows(5000, 3000);
  near.push(1, 0, 1, 1, 1, 1, 1);
  near.reserve(4500);
  for (let i = 0; i < 6000; i++) near.push(1, 0, i, i, i, i, i);
  assert.equal(near.length, 5000);
});

Deno.test("several devices' windows replayed in one call find what each window replayed alone finds, and the first device's broken row is the one refused", async () => {
  const rows = new LeakRows(10_000, 64);
  // Three devices interleaved (device 1 has none; device 4 rows but no
  // window), each MALLOC at a Ptr of its own, every third freed at once,
  // IDs counted per device.
  const devices = [0, 2, 3, 2, 0, 3, 3, 4];
  const next = [1, 1, 1, 1, 1];
  for (let i = 0; i < 3000; i++) {
    const k = devices[i % devices.length];
    const id = next[k]++;
    rows.push(1, k, id, 0x1000 * (i + 1), 64, i, i + 2);
    if (i % 3 === 0) rows.push(2, k, next[k]++, 0x1000 * (i + 1), 0, i, i + 2);
  }
  const windows = new Map([
    [3, { a: 1, b: 500, c: 700 }],
    [0, { a: 1, b: 1500, c: 1600 }],
    [1, { a: 1, b: 10, c: 20 }],
    [2, { a: 100, b: 200, c: 100_000 }],
  ]);
  const together = await replayWindows(rows, windows);
  const alone = [];
  // One window alone reads every row: the listing is not in its way.
  for (const [k, w] of windows) {
    alone.push(...await replayWindows(rows, new Map([[k, w]])));
  }
  assert.deepEqual(together, alone);
  assert.ok(together[1].length > 0 && together[2].length === 0);
  // A MALLOC without a size in two windows: the first window's is named.
  const line = (k: number) => {
    for (let i = rows.length - 1; i >= 0; i--) {
      if (rows.device[i] === k && rows.kind[i] === 1 && rows.id[i] < 400) {
        rows.size[i] = NaN;
        return rows.line[i];
      }
    }
  };
  // A device has one window: a second is refused, not taken for the first.
  await assert.rejects(
    () =>
      leakReplayWindows(rows, rows.length, [
        { device: 0, a: 1, b: 2, c: 3 },
        { device: 0, a: 1, b: 2, c: 3 },
      ]),
    RangeError,
  );
  const second = line(0), first = line(3);
  await assert.rejects(
    () => replayWindows(rows, windows),
    new RegExp(`line ${first} `),
  );
  assert.notEqual(first, second);
});
