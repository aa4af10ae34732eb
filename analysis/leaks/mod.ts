/**
 * Leak analyses: check_leaks, the real tool's offline rule over an event log
 * between three mstx marks, with its options and printed lines; and the
 * online analysis (suspects at step ends, fluctuation) of a running job.
 *
 * @example
 * ```ts
 * import { checkLeaksFile, formatCheckLeaks } from "./mod.ts";
 * const result = await checkLeaksFile("memscope_dump.csv", { mstxInfo: "step" });
 * for (const line of formatCheckLeaks(result)) console.log(line);
 * ```
 *
 * @module
 */

export { checkLeaksFile } from "./check_leaks.ts";
export {
  type CheckedOptions,
  CheckLeaksError,
  type CheckLeaksOptions,
  checkOptions,
  type LeakDetail,
  LIBRARY_NAMES,
  MEMORY_POOLS,
  type OptionNames,
  type RawOptions,
} from "./options.ts";
export type { CheckLeaksResult, DeviceLeaks, Leak, Window } from "./result.ts";
export { formatCheckLeaks, pythonFloat } from "./format.ts";
export {
  formatFluctuation,
  formatLeakSummary,
  type LeakSuspect,
  OnlineLeaks,
  STEP_MESSAGE,
  type StepFluctuation,
} from "./online_leaks.ts";
