import assert from "node:assert/strict";
import { FoundLeaks } from "../../../analysis/leaks/_found.ts";
import { LeakRows, MALLOC } from "../../../analysis/leaks/_leak_rows.ts";

/** MALLOC rows of `device` with these IDs, each 100 bytes more than its ID. */
function leaks(device: number, ids: number[]): LeakRows {
  const rows = new LeakRows(Infinity);
  for (const id of ids) rows.push(MALLOC, device, id, id, 100 + id, id, id);
  return rows;
}

/** A window over every ID, for `device`. */
const whole = (device: number) => new Map([[device, { a: 0, b: 1e9, c: 1e9 }]]);

Deno.test("leaks collected device by device, out of listing order and in parts, list the first maxLeaks by device, then ID, and count every one", async () => {
  // Device 2 is listed first, then 0, then 1.
  const found = new FoundLeaks(Int32Array.from([1, 2, 0]), 3);
  await found.collect(leaks(1, [1, 2, 3, 4]), whole(1));
  await found.collect(leaks(0, [40, 60]), whole(0));
  await found.collect(leaks(2, [10, 30]), whole(2));
  // A second part of device 2: one of its rows comes before both above.
  await found.collect(leaks(2, [5, 20]), whole(2));
  const listed = found.listed();
  assert.deepEqual(
    [...listed.device.subarray(0, listed.length)],
    [2, 2, 2],
  );
  assert.deepEqual([...listed.id.subarray(0, listed.length)], [5, 10, 20]);
  assert.deepEqual([...found.counts], [2, 4, 4]);
  assert.deepEqual([...found.bytes], [300, 410, 465]);
});

Deno.test("leaks of a device listed after others already kept fill only what maxLeaks leaves", async () => {
  const found = new FoundLeaks(Int32Array.from([0, 1]), 3);
  await found.collect(leaks(0, [7, 8]), whole(0));
  await found.collect(leaks(1, [1, 2, 3]), whole(1));
  const listed = found.listed();
  assert.deepEqual([...listed.device.subarray(0, listed.length)], [0, 0, 1]);
  assert.deepEqual([...listed.id.subarray(0, listed.length)], [7, 8, 1]);
  assert.deepEqual([...found.counts], [2, 3]);
});
