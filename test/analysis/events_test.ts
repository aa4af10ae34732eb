import assert from "node:assert/strict";
import { POOL_CODE, POOLS } from "../../analysis/events.ts";
import { MEMORY_POOLS } from "../../analysis/leaks/mod.ts";
import { PoolUsage } from "../../analysis/pool_usage.ts";
import { REC } from "../../ffi/bindings.ts";

Deno.test("each pool's code is the ring's code for it, so names and codes have one owner on each side", () => {
  // bindings.ts is held to the compiled ring header by its own test.
  assert.deepEqual(POOL_CODE, {
    HAL: REC.POOL_HAL,
    HOST: REC.POOL_HOST,
    PTA: REC.POOL_PTA,
  });
  POOLS.forEach((pool, code) => assert.equal(POOL_CODE[pool], code));
  assert.equal(POOLS.length, 3);
});

Deno.test("every pool the daemon tracks is a pool check-leaks reads", () => {
  for (const pool of POOLS) {
    assert.ok((MEMORY_POOLS as readonly string[]).includes(pool), pool);
  }
});

Deno.test("pool usage keeps host blocks (device -1) apart from device 0 and grows for high device ids", () => {
  const usage = new PoolUsage();
  assert.equal(usage.add(-1, POOL_CODE.HOST, 100), 100);
  assert.equal(usage.add(0, POOL_CODE.HOST, 7), 7);
  assert.equal(usage.add(15, POOL_CODE.PTA, 4096), 4096);
  assert.equal(usage.add(15, POOL_CODE.PTA, -96), 4000);
  assert.equal(usage.peak(15, POOL_CODE.PTA), 4096);
  assert.equal(usage.peak(-1, POOL_CODE.HOST), 100);
  assert.equal(usage.peak(99, POOL_CODE.HAL), 0);
});
