/**
 * Bytes live in each pool of each device, and their high-water mark: the one
 * count behind the event log's `used` attribute and the online fluctuation
 * analysis. Typed arrays, since it runs on every allocation and free.
 *
 * @module
 */
import { POOLS } from "./events.ts";

/**
 * Bytes live per device and pool. Device -1 holds host blocks (no device).
 *
 * @example
 * ```ts
 * import { PoolUsage } from "./pool_usage.ts";
 * import { POOL_CODE } from "./events.ts";
 * const usage = new PoolUsage();
 * usage.add(0, POOL_CODE.HAL, 4096); // 4096
 * usage.add(0, POOL_CODE.HAL, -1024); // 3072
 * usage.peak(0, POOL_CODE.HAL); // 4096
 * ```
 */
export class PoolUsage {
  // By (device + 1) * POOLS.length + pool code: device -1 is host memory.
  #used = new Float64Array(2 * POOLS.length);
  #peak = new Float64Array(2 * POOLS.length);

  /** Adds `delta` bytes to `pool` (a pool code) of `device`; returns the bytes live after. */
  add(device: number, pool: number, delta: number): number {
    const key = (device + 1) * POOLS.length + pool;
    if (key >= this.#used.length) this.#grow(key);
    const used = this.#used[key] += delta;
    if (used > this.#peak[key]) this.#peak[key] = used;
    return used;
  }

  /** The most bytes `pool` of `device` has held at once. */
  peak(device: number, pool: number): number {
    return this.#peak[(device + 1) * POOLS.length + pool] ?? 0;
  }

  // Kept out of add so that the hot part stays small enough to inline.
  #grow(key: number): void {
    const used = new Float64Array(2 * key + 2), peak = used.slice();
    used.set(this.#used);
    peak.set(this.#peak);
    this.#used = used;
    this.#peak = peak;
  }
}
