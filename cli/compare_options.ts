/**
 * compare's options as given on the command line: `--level` and `--input`.
 *
 * @module
 */
import { CompareError, type CompareLevel } from "../analysis/compare/mod.ts";

/**
 * Parses `--level`: `op` (the real tool's default), `kernel`, or both
 * separated by a comma (ASCII or full-width).
 *
 * @example
 * ```ts
 * import { parseCompareLevel } from "./compare_options.ts";
 * parseCompareLevel("kernel"); // ["kernel"]
 * parseCompareLevel(undefined); // ["op"]
 * ```
 */
export function parseCompareLevel(value: string | undefined): CompareLevel[] {
  if (value === undefined) return ["op"];
  const parts = value.split(/[,，]/).filter((p) => p !== "");
  if (parts.length === 0 || parts.some((p) => p !== "op" && p !== "kernel")) {
    throw new CompareError(
      `Invalid --level value: ${value}; use op (default), kernel, or op,kernel`,
    );
  }
  const levels = new Set(parts);
  return (["op", "kernel"] as const).filter((l) => levels.has(l));
}

/**
 * Splits `--input` into the base and compare paths: two paths separated by
 * a comma, ASCII or full-width as the real tool allows; empty parts are
 * skipped.
 *
 * @example
 * ```ts
 * import { parseCompareInput } from "./compare_options.ts";
 * parseCompareInput("step1.csv，step2.csv"); // ["step1.csv", "step2.csv"]
 * ```
 */
export function parseCompareInput(value: string | undefined): [string, string] {
  if (value === undefined) {
    throw new CompareError(
      "compare needs --input BASE.csv,COMPARE.csv: the two event logs to compare",
    );
  }
  const paths = value.split(/[,，]/).filter((p) => p !== "");
  if (paths.length !== 2) {
    throw new CompareError(
      `Invalid --input value: ${value}; give exactly two event logs separated by a comma, as --input BASE.csv,COMPARE.csv`,
    );
  }
  return [paths[0], paths[1]];
}
