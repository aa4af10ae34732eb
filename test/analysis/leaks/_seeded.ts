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

/**
 * `rows` out of order as a log's rows come (each swapped with one up to
 * 31 places after it, by `random`), in place; returns them.
 *
 * @example
 * ```ts
 * const rows = jostled(["a", "b", "c"], seeded(7));
 * console.log(rows.length);
 * ```
 */
export function jostled<T>(rows: T[], random: (n: number) => number): T[] {
  for (let i = 0; i < rows.length; i++) {
    const j = Math.min(rows.length - 1, i + random(32));
    [rows[i], rows[j]] = [rows[j], rows[i]];
  }
  return rows;
}
