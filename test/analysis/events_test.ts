import assert from "node:assert/strict";
import { POOL_CODE, POOLS } from "../../analysis/events.ts";
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
