import assert from "node:assert/strict";
import { LiveBlocks } from "../../analysis/live_blocks.ts";

Deno.test("live blocks find, replace and take blocks by address", () => {
  const live = new LiveBlocks();
  const a = live.insert(0x12c0000000, 4096);
  live.device[a] = 3;
  assert.equal(live.find(0x12c0000000), a);
  assert.equal(live.find(0x12c0001000), -1);
  // A second allocation at the same address replaces the first.
  assert.equal(live.insert(0x12c0000000, 512), a);
  assert.equal(live.count, 1);
  assert.equal(live.bytes, 512);
  assert.equal(live.take(0x12c0000000), a);
  assert.equal(live.size[a], 512, "columns stay readable after take");
  assert.equal(live.take(0x12c0000000), -1);
  assert.deepEqual([live.count, live.bytes], [0, 0]);
});

Deno.test("live blocks agree with a Map over a million random allocations and frees", () => {
  const live = new LiveBlocks();
  const model = new Map<number, number>();
  let seed = 7;
  const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  const addrs: number[] = [];
  for (let i = 0; i < 1_000_000; i++) {
    // Device-like addresses above 2^32, 4 KiB apart, so that they collide.
    const fresh = 0x100000000 + (random() % 8192) * 4096;
    if (random() % 3 !== 0 || addrs.length === 0) {
      live.insert(fresh, i);
      if (!model.has(fresh)) addrs.push(fresh);
      model.set(fresh, i);
    } else {
      const k = random() % addrs.length;
      const addr = addrs[k];
      addrs[k] = addrs[addrs.length - 1];
      addrs.pop();
      const row = live.take(addr);
      assert.equal(live.size[row], model.get(addr));
      model.delete(addr);
    }
  }
  assert.equal(live.count, model.size);
  const seen = new Map<number, number>();
  for (const row of live.rows()) seen.set(live.addr[row], live.size[row]);
  assert.deepEqual(seen, model);
  for (const addr of model.keys()) assert.notEqual(live.find(addr), -1);
});

Deno.test("a live block reads back as an object with its pool's name", () => {
  const live = new LiveBlocks();
  const row = live.insert(0x2000, 64);
  live.pool[row] = 2;
  live.allocationId[row] = 9;
  assert.equal(live.block(row).pool, "PTA");
  assert.equal(live.block(row).allocationId, 9);
});

Deno.test("live blocks list the newest accepted blocks first, bounded by the limit", () => {
  const live = new LiveBlocks();
  let seed = 11;
  const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  const alive = new Map<number, number>(); // addr -> allocationId
  for (let id = 1; id <= 5000; id++) {
    const addr = 0x100000000 + (random() % 2048) * 4096;
    const row = live.insert(addr, id);
    live.allocationId[row] = id;
    alive.set(addr, id);
    if (random() % 4 === 0) {
      const gone = 0x100000000 + (random() % 2048) * 4096;
      if (live.take(gone) >= 0) alive.delete(gone);
    }
  }
  const even = (row: number) => live.allocationId[row] % 2 === 0;
  const expected = [...alive.values()].filter((id) => id % 2 === 0)
    .sort((x, y) => y - x);
  for (const limit of [1, 7, 100, expected.length + 5]) {
    assert.deepEqual(
      live.newest(limit, even).map((row) => live.allocationId[row]),
      expected.slice(0, limit),
    );
  }
  assert.deepEqual(live.newest(0, even), []);
});
