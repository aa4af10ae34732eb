/**
 * The analyses' printed lines, written to stdout at once.
 *
 * @module
 */

/**
 * Writes `lines`, each ending in a newline, to stdout in one go:
 * console.log took 8-13 ms to print check-leaks' 10,000 leak lines (750
 * KB), a write of their bytes 2-3 ms, on commands timed whole. A reader
 * that went away (`| head`) is no error: what it did not read is dropped,
 * as console.log drops it.
 *
 * @example
 * ```ts ignore
 * printLines(["INFO: Starting to analyze data for device 0..."]);
 * ```
 */
export function printLines(lines: string[]): void {
  if (!lines.length) return;
  const bytes = new TextEncoder().encode(lines.join("\n") + "\n");
  try {
    for (let at = 0; at < bytes.length;) {
      at += Deno.stdout.writeSync(bytes.subarray(at));
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.BrokenPipe)) throw e;
  }
}
