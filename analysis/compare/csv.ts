/**
 * `compare/memory_compare_{timestamp}.csv`, as msMemScope writes it: two
 * header lines, then one line per aligned op or kernel.
 *
 * @module
 */
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
 * Writes `{outputDir}/compare/memory_compare_{stamp}.csv`: directories made
 * 0700 when missing, the file 0600, written to a part file and renamed so
 * that no reader sees it half-written. Returns the path written.
 *
 * @example
 * ```ts
 * import { writeCompareCsv } from "./mod.ts";
 * const dir = Deno.makeTempDirSync();
 * await writeCompareCsv(dir, [], { stamp: "20261120231733" });
 * // `${dir}/compare/memory_compare_20261120231733.csv`
 * ```
 */
export async function writeCompareCsv(
  outputDir: string,
  rows: readonly CompareRow[],
  options: { stamp: string },
): Promise<string> {
  const { stamp } = options;
  const dir = `${outputDir.replace(/\/+$/, "") || "/"}/compare`;
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const path = `${dir}/memory_compare_${stamp}.csv`;
  const part = `${path}.part`;
  const encoder = new TextEncoder();
  {
    using file = await Deno.open(part, {
      write: true,
      create: true,
      truncate: true,
      mode: 0o600,
    });
    await Deno.chmod(part, 0o600);
    let chunk = COMPARE_HEADER + "\n";
    for (const row of rows) {
      chunk += compareCsvLine(row) + "\n";
      if (chunk.length >= 1 << 20) {
        await writeAll(file, encoder.encode(chunk));
        chunk = "";
      }
    }
    await writeAll(file, encoder.encode(chunk));
  }
  await Deno.rename(part, path);
  return path;
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  for (let done = 0; done < bytes.length;) {
    done += await file.write(bytes.subarray(done));
  }
}
