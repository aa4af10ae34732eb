/**
 * compare: which ops (or kernels) of one training step take more memory than
 * the same ops of another, as msMemScope's `--compare` finds them and writes
 * them to `compare/memory_compare_{timestamp}.csv` (SPEC section 4).
 *
 * @example
 * ```ts
 * import { compareSteps, readStep, writeCompareCsv } from "./mod.ts";
 * const rows = compareSteps(
 *   await readStep("step1.csv", ["op"]),
 *   await readStep("step2.csv", ["op"]),
 * );
 * await writeCompareCsv("stompwatch_out", rows, { at: new Date() });
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
export { COMPARE_HEADER, compareCsvLine, writeCompareCsv } from "./csv.ts";
export { type Edit, myersDiff } from "./myers_diff.ts";
