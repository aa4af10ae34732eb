/**
 * The leak tests' random numbers: the same sequence from the same seed,
 * so a generated log that fails can be made again.
 *
 * @module
 */

/**
 * A seeded `random(n)`: a whole number below n.
 *
 * @example
 * ```ts
 * const random = seeded(7);
 * console.log(random(10));
 * ```
 */
export function seeded(seed: number): (n: number) => number {
  return (n) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return Math.floor((seed / 2 ** 31) * n);
  };
}
