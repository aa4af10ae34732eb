/**
 * Strict parsing of `--name value`, `--name=value`, `-x value` and boolean
 * flags, with the messages of node:util's parseArgs (which this replaces:
 * importing any node: module loads Node's compatibility layer, 20 ms of
 * every command's start-up). Only what the commands use: string and boolean
 * options, one-letter short names, positionals, `--` ending the options.
 *
 * @module
 */

/** One option: a string value or a boolean flag, with an optional `-x`. */
export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
}

/** Options by long name. */
export type OptionsSpec = Record<string, OptionSpec>;

/** What {@link parseArgs} found. */
export interface ParsedArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

function described(name: string, spec: OptionSpec): string {
  const short = spec.short ? `-${spec.short}, ` : "";
  return `${short}--${name}${spec.type === "string" ? " <value>" : ""}`;
}

/**
 * Parses `args` against `options`; throws a TypeError whose first sentence
 * says what was wrong: an unknown option, a missing or ambiguous value, or
 * a value given to a flag.
 *
 * @example
 * ```ts
 * import { parseArgs } from "./_parse_args.ts";
 * const { values } = parseArgs(["-o", "x.pickle", "--json"], {
 *   output: { type: "string", short: "o" },
 *   json: { type: "boolean" },
 * });
 * values.output; // "x.pickle"
 * ```
 */
export function parseArgs(args: string[], options: OptionsSpec): ParsedArgs {
  const values: ParsedArgs["values"] = {};
  const positionals: string[] = [];
  const byShort = new Map(
    Object.entries(options).flatMap(([name, o]) =>
      o.short ? [[o.short, name] as const] : []
    ),
  );
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const long = arg.startsWith("--");
    const token = long && eq > 0 ? arg.slice(0, eq) : arg;
    const name = long ? token.slice(2) : byShort.get(token.slice(1));
    const spec = name !== undefined && Object.hasOwn(options, name)
      ? options[name]
      : undefined;
    if (name === undefined || spec === undefined) {
      throw new TypeError(
        `Unknown option '${token}'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- "${token}"`,
      );
    }
    if (spec.type === "boolean") {
      if (long && eq > 0) {
        throw new TypeError(`Option '--${name}' does not take an argument`);
      }
      values[name] = true;
      continue;
    }
    if (long && eq > 0) {
      values[name] = arg.slice(eq + 1);
      continue;
    }
    const value = args[i + 1];
    if (value === undefined) {
      throw new TypeError(
        `Option '${described(name, spec)}' argument missing`,
      );
    }
    if (value.startsWith("-")) {
      throw new TypeError(
        `Option '${token}' argument is ambiguous.\nDid you forget to specify the option argument for '${token}'?\nTo specify an option argument starting with a dash use '--${name}=-XYZ'.`,
      );
    }
    values[name] = value;
    i++;
  }
  return { values, positionals };
}
