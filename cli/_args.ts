/**
 * What every subcommand's argument parsing shares.
 *
 * @module
 */
import { type OptionsSpec, parseArgs } from "./_parse_args.ts";

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

/** How {@linkcode parseCommandArgs} reads and words one subcommand. */
export interface CommandArgs {
  options: OptionsSpec;
  /** Options that take a value, as typed (`--max-leaks`, `-o`). */
  valued: readonly string[];
  /** The subcommand's name and its flags, for messages. */
  command: string;
  flags: string;
  /** Makes the subcommand's own error from a message. */
  fail: (message: string) => Error;
}

/**
 * Parses a subcommand's options strictly. parseArgs's own error becomes one
 * line that names the problem and the flags the command takes; a stray
 * positional argument is refused, since each command takes its log as
 * `--input`.
 *
 * @example
 * ```ts
 * import { parseCommandArgs } from "./_args.ts";
 * const { values } = parseCommandArgs(["--input", "a.csv"], {
 *   options: { input: { type: "string" } },
 *   valued: ["--input"],
 *   command: "check-leaks",
 *   flags: "--input FILE",
 *   fail: (m) => new Error(m),
 * });
 * values.input; // "a.csv"
 * ```
 */
export function parseCommandArgs(
  args: string[],
  spec: CommandArgs,
): { values: Record<string, string | boolean | undefined> } {
  let parsed;
  try {
    parsed = parseArgs(joinNegative(args, spec.valued), spec.options);
  } catch (e) {
    const m = (e as Error).message;
    const unknown = /Unknown option '([^']+)'/.exec(m);
    const why = unknown
      ? `Unknown option: ${unknown[1]}`
      : m.split(/\.( |$)/)[0];
    throw spec.fail(`${why}; ${spec.command} takes ${spec.flags}`);
  }
  if (parsed.positionals.length) {
    throw spec.fail(
      `Unexpected argument: ${
        parsed.positionals[0]
      }; give the log as --input FILE.csv`,
    );
  }
  return {
    values: parsed.values as Record<string, string | boolean | undefined>,
  };
}
