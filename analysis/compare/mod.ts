/**
 * compare: which ops (or kernels) of one training step take more memory than
 * the same ops of another, as msMemScope's `--compare` finds them and writes
 * them to `compare/memory_compare_{timestamp}.csv` (SPEC section 4).
 *
 * @example
 * ```ts
 * import { runCompare } from "./mod.ts";
 * const { path, rows } = await runCompare({
 *   input: "step1.csv,step2.csv",
 *   level: "op",
 *   outputDir: "stompwatch_out",
 *   stamp: "20261120231733",
 * });
 * ```
 *
 * @module
 */

export {
  type AlignedRows,
  COMPARE_COLUMNS,
  type CompareLevel,
  type Framework,
  LEVEL_EVENT_TYPES,
  readStep,
  stepFromBytes,
  type StepLog,
} from "./_step.ts";
export { CompareError, type CompareRow, compareSteps } from "./compare.ts";
export { parseCompareInput, parseCompareLevel } from "./options.ts";
export { COMPARE_HEADER, compareCsvLine, writeCompareCsv } from "./csv.ts";
export {
  type CompareResult,
  runCompare,
  type RunCompareOptions,
} from "./run.ts";
export { type Edit, myersDiff } from "./myers_diff.ts";
