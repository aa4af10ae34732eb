import assert from "node:assert/strict";
import { AddrSet } from "../../../analysis/snapshot/_addr_set.ts";

/** A small generator of whole numbers, the same each run. */
function lcg(seed: number): (n: number) => number {
  let x = seed;
  return (n) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x % n;
  };
}

Deno.test("AddrSet holds addresses in ascending order as a sorted array does, through thousands of inserts and deletes that split and empty its chunks", () => {
  const pick = lcg(11);
  const set = new AddrSet();
  const ref: number[] = [];
  const lower = (v: number) => {
    let i = 0;
    while (i < ref.length && ref[i] < v) i++;
    return i;
  };
  let least = Infinity;
  for (let step = 0; step < 20_000; step++) {
    // Grows to about 4,000 (8 chunks), shrinks to none or nearly, grows.
    const grow = step < 8_000 || step > 17_000 ? 3 : 1;
    if (ref.length && pick(4) >= grow) {
      const v = ref[pick(ref.length)];
      set.delete(v);
      ref.splice(lower(v), 1);
      set.delete(v); // not held: nothing changes
    } else {
      const v = pick(1 << 20) * 512;
      if (ref[lower(v)] === v) continue;
      set.insert(v);
      ref.splice(lower(v), 0, v);
    }
    assert.equal(set.size, ref.length);
    if (step > 8_000) least = Math.min(least, ref.length);
    if (step % 97 === 0) assert.deepEqual([...set], ref, `step ${step}`);
    const from = pick(1 << 20) * 512, to = from + pick(1 << 14) * 512;
    const i = lower(from);
    const want = ref.slice(i > 0 ? i - 1 : 0).filter((v, k) =>
      v < to || (k === 0 && i > 0)
    );
    assert.deepEqual(set.nearby(from, to), want, `nearby ${from} ${to}`);
    const probe = pick(3) ? from : ref[pick(ref.length)] ?? from;
    const below = ref.slice(0, lower(probe + 1)).reverse();
    assert.deepEqual([...set.downFrom(probe)], below, `down from ${probe}`);
  }
  assert.ok(least < 10, `the set shrank to ${least}`);
  set.clear();
  assert.equal(set.size, 0);
  assert.deepEqual([...set], []);
  assert.deepEqual(set.nearby(0, 1 << 30), []);
  assert.deepEqual([...set.downFrom(1 << 30)], []);
});
