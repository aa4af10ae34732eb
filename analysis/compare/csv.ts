/**
 * `compare/memory_compare_{timestamp}.csv`, as msMemScope writes it: two
 * header lines, then one line per aligned op or kernel.
 *
 * @module
 */
import { fileStamp, holdPart, writeAll } from "../files.ts";
import { csvField } from "../memscope_csv/mod.ts";
import type { CompareRow } from "./compare.ts";

/** The two header lines of `memory_compare_*.csv`. */
export const COMPARE_HEADER = ",,,Base,Compare\n" +
  "Event,Name,Device Id,Allocated Memory(byte),Allocated Memory(byte),Diff Memory(byte)";

/**
 * One data line of `memory_compare_*.csv` (no newline); the name is quoted
 * when it holds a comma, a quote or a newline.
 *
 * @example
 * ```ts
 * import { compareCsvLine } from "./mod.ts";
 * compareCsvLine({
 *   event: "OP_LAUNCH", name: "aten.randn", device: 0,
 *   base: null, compare: 4000256, diff: 4000256,
 * }); // "OP_LAUNCH,aten.randn,0,N/A,4000256,4000256"
 * ```
 */
export function compareCsvLine(row: CompareRow): string {
  return [
    csvField(row.event),
    csvField(row.name),
    row.device,
    row.base ?? "N/A",
    row.compare ?? "N/A",
    row.diff,
  ].join(",");
}

/**
 * Writes `{outputDir}/compare/memory_compare_{YYYYmmddHHMMSS}.csv`, stamped
 * with `at`: directories made 0700 when missing, the file 0600, written to a
 * part file and then linked under its name, so that no reader sees it
 * half-written and an earlier compare's file of the same second is never
 * replaced (the next free second's name is taken instead, as the daemon's
 * files do). `rows` may come as their data lines already, encoded, each
 * ending in a newline, in chunks (the native comparison writes them so).
 * Returns the path written.
 *
 * @example
 * ```ts
 * import { writeCompareCsv } from "./mod.ts";
 * const dir = Deno.makeTempDirSync();
 * await writeCompareCsv(dir, [], { at: new Date(2026, 10, 20, 23, 17, 33) });
 * // `${dir}/compare/memory_compare_20261120231733.csv`
 * ```
 */
export async function writeCompareCsv(
  outputDir: string,
  rows: readonly CompareRow[] | Iterable<Uint8Array>,
  options: { at: Date },
): Promise<string> {
  const dir = `${outputDir.replace(/\/+$/, "") || "/"}/compare`;
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  using held = holdPart(`${dir}/.memory_compare.${Deno.pid}`);
  const part = held.part;
  const encoder = new TextEncoder();
  try {
    {
      using file = Deno.openSync(part, {
        write: true,
        create: true,
        truncate: true, // our own part file, never a finished CSV
        mode: 0o600,
      });
      Deno.chmodSync(part, 0o600);
      let chunk = COMPARE_HEADER + "\n";
      if (!Array.isArray(rows)) {
        writeAll(file, encoder.encode(chunk));
        for (const lines of rows as Iterable<Uint8Array>) writeAll(file, lines);
        rows = [];
        chunk = "";
      }
      for (const row of rows as readonly CompareRow[]) {
        chunk += compareCsvLine(row) + "\n";
        if (chunk.length >= 1 << 20) {
          writeAll(file, encoder.encode(chunk));
          chunk = "";
        }
      }
      writeAll(file, encoder.encode(chunk));
    }
    return publish(part, dir, options.at);
  } finally {
    try {
      Deno.removeSync(part);
    } catch { /* linked and removed, or never made */ }
  }
}

// A link fails where rename would replace: the first free second's name.
function publish(part: string, dir: string, at: Date): string {
  for (let second = 0;; second++) {
    const stamp = fileStamp(new Date(at.getTime() + second * 1000));
    const path = `${dir}/memory_compare_${stamp}.csv`;
    try {
      Deno.linkSync(part, path);
      return path;
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists) || second >= 10_000) {
        throw e;
      }
    }
  }
}
