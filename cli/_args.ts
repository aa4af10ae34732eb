/**
 * What every subcommand's argument parsing shares.
 *
 * @module
 */

/**
 * Joins `--opt -1` into `--opt=-1` for each option in `valued`, so that
 * parseArgs hands the value to the option (which then says what is wrong
 * with it) instead of reading `-1` as an unknown flag.
 *
 * @example
 * ```ts
 * import { joinNegative } from "./_args.ts";
 * joinNegative(["--max-leaks", "-1"], ["--max-leaks"]); // ["--max-leaks=-1"]
 * ```
 */
export function joinNegative(
  args: string[],
  valued: readonly string[],
): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (valued.includes(args[i]) && /^-\d/.test(args[i + 1] ?? "")) {
      out.push(`${args[i]}=${args[++i]}`);
    } else out.push(args[i]);
  }
  return out;
}
