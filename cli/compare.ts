/**
 * `stompwatch compare`: its options in, both logs read, rows compared, the
 * CSV written, and what it prints then (the path, row counts and the largest
 * differences). No printing here; main.ts prints.
 *
 * @module
 */
import {
  type CompareRow,
  compareSteps,
  readStep,
  writeCompareCsv,
} from "../analysis/compare/mod.ts";
import { nativeCompare } from "../analysis/compare/_native_compare.ts";
import {
  columnsOf,
  type CompareColumns,
  diffAt,
  rowAt,
} from "../analysis/compare/columns.ts";
import { parseCompareInput, parseCompareLevel } from "./compare_options.ts";
import { removingPartsOnSignal } from "./_signals.ts";

/** Options of {@linkcode runCompare}. */
export interface RunCompareOptions {
  /** `--input` as given. */
  input: string | undefined;
  /** `--level` as given; op when undefined. */
  level: string | undefined;
  /** Directory the `compare/` folder goes in. */
  outputDir: string;
  /** When the compare ran: the output is named after it. */
  at: Date;
}

/** What {@linkcode runCompare} did. */
export interface CompareResult {
  path: string;
  rows: CompareColumns;
}

/**
 * The whole `stompwatch compare`: parses the options, reads both logs, writes
 * the CSV. Bad input throws {@link CompareError} or {@link MemscopeCsvError},
 * each with a one-line message.
 *
 * @example
 * ```ts
 * import { runCompare } from "./compare.ts";
 * const { path, rows } = await runCompare({
 *   input: "step1.csv,step2.csv",
 *   level: "op",
 *   outputDir: "stompwatch_out",
 *   at: new Date(),
 * });
 * ```
 */
export async function runCompare(
  options: RunCompareOptions,
): Promise<CompareResult> {
  const [basePath, comparePath] = parseCompareInput(options.input);
  const levels = parseCompareLevel(options.level);
  using _ = removingPartsOnSignal();
  using native = await nativeCompare([basePath, comparePath], levels);
  const compared = native ?? compareSteps(
    await readStep(basePath, levels),
    await readStep(comparePath, levels),
  );
  let path: string;
  try {
    path = await writeCompareCsv(
      options.outputDir,
      "lines" in compared ? compared.lines : compared,
      { at: options.at },
    );
  } catch (e) {
    throw new Error(
      `Cannot write the comparison under --output ${options.outputDir}: ${
        whyNotWritten(e)
      }; give a directory of your own`,
    );
  }
  return {
    path,
    rows: "columns" in compared ? compared.columns : columnsOf(compared),
  };
}

/** Why the output could not be written, without Deno's advice on flags. */
function whyNotWritten(e: unknown): string {
  // /proc, /sys and /dev: Deno grants them only with --allow-all.
  if (e instanceof Deno.errors.NotCapable) {
    return "stompwatch may not write there";
  }
  return (e as Error).message;
}

/**
 * The `count` rows with the largest |diff| (non-zero only), largest first;
 * equal ones keep file order.
 *
 * @example
 * ```ts
 * import { largestDifferences } from "./compare.ts";
 * const row = { event: "OP_LAUNCH", name: "mm", device: 0, base: 6 };
 * largestDifferences([{ ...row, compare: 1, diff: -5 }, { ...row, compare: 6, diff: 0 }], 10).length; // 1
 * ```
 */
export function largestDifferences(
  rows: CompareColumns | readonly CompareRow[],
  count: number,
): CompareRow[] {
  const columns = Array.isArray(rows)
    ? columnsOf(rows)
    : rows as CompareColumns;
  // One pass keeping the best `count` in order: a sort of every row was
  // most of the summary's time on a log of 200k ops.
  const top: number[] = [], sizes: number[] = [];
  const n = count > 0 ? columns.device.length : 0;
  for (let i = 0; i < n; i++) {
    const diff = diffAt(columns, i), size = Math.abs(diff);
    if (diff === 0 || (top.length === count && size <= sizes[count - 1])) {
      continue;
    }
    // After every kept row at least as large: earlier rows win ties.
    let at = top.length;
    while (at > 0 && sizes[at - 1] < size) at--;
    top.splice(at, 0, i);
    sizes.splice(at, 0, size);
    if (top.length > count) top.pop(), sizes.pop();
  }
  return top.map((i) => rowAt(columns, i));
}

/**
 * What `stompwatch compare` prints: the path written, row counts, and the ten
 * largest differences in bytes and MB (2^20 bytes).
 *
 * @example
 * ```ts
 * import { compareSummary } from "./compare.ts";
 * compareSummary("out/compare/memory_compare_20261120231733.csv", [{
 *   event: "OP_LAUNCH", name: "aten.randn", device: 0,
 *   base: null, compare: 4000256, diff: 4000256,
 * }]);
 * // ["Wrote out/compare/memory_compare_20261120231733.csv: 1 row on 1 device, 0 only in base, 1 only in compare",
 * //  "Largest differences (compare - base):",
 * //  "  +4000256 B (+3.81 MB)  device 0  aten.randn  base N/A, compare 4000256"]
 * ```
 */
export function compareSummary(
  path: string,
  rows: CompareColumns | readonly CompareRow[],
): string[] {
  const columns = Array.isArray(rows)
    ? columnsOf(rows)
    : rows as CompareColumns;
  const { device, base, compare } = columns;
  const seen = new Set<number>();
  let onlyBase = 0, onlyCompare = 0, last = NaN;
  for (let i = 0; i < device.length; i++) {
    if (device[i] !== last) seen.add(last = device[i]);
    if (Number.isNaN(compare[i])) onlyBase++;
    if (Number.isNaN(base[i])) onlyCompare++;
  }
  const devices = seen.size;
  const plural = (n: number, word: string) =>
    `${n} ${word}${n === 1 ? "" : "s"}`;
  const lines = [
    `Wrote ${path}: ${plural(device.length, "row")} on ${
      plural(devices, "device")
    }, ${onlyBase} only in base, ${onlyCompare} only in compare`,
  ];
  const top = largestDifferences(columns, 10);
  if (top.length === 0) {
    lines.push("No memory differences between the two logs");
    return lines;
  }
  lines.push("Largest differences (compare - base):");
  const sign = (n: number) => (n > 0 ? "+" : "-");
  for (const r of top) {
    const mb = (Math.abs(r.diff) / 1048576).toFixed(2);
    lines.push(
      `  ${sign(r.diff)}${Math.abs(r.diff)} B (${
        sign(r.diff)
      }${mb} MB)  device ${r.device}  ${r.name}  base ${
        r.base ?? "N/A"
      }, compare ${r.compare ?? "N/A"}`,
    );
  }
  return lines;
}
