/**
 * The whole compare: options in, both logs read, rows compared, CSV written.
 *
 * @module
 */
import { readStep } from "./_step.ts";
import { type CompareRow, compareSteps } from "./compare.ts";
import { writeCompareCsv } from "./csv.ts";
import { parseCompareInput, parseCompareLevel } from "./options.ts";

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
  rows: CompareRow[];
}

/**
 * The whole `stompwatch compare`: parses the options, reads both logs, writes
 * the CSV. Bad input throws {@link CompareError} or {@link MemscopeCsvError},
 * each with a one-line message.
 *
 * @example
 * ```ts
 * import { runCompare } from "./mod.ts";
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
  const base = await readStep(basePath, levels);
  const compare = await readStep(comparePath, levels);
  const rows = compareSteps(base, compare);
  const path = await writeCompareCsv(options.outputDir, rows, {
    at: options.at,
  });
  return { path, rows };
}
