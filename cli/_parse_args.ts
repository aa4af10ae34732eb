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
  const unknown = (token: string) =>
    new TypeError(
      `Unknown option '${token}'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- "${token}"`,
    );
  /** The value of string option `name` given as `token`: the next argument. */
  const valueOf = (name: string, token: string, i: number): string => {
    const spec = options[name];
    const value = args[i + 1];
    if (value === undefined) {
      throw new TypeError(`Option '${described(name, spec)}' argument missing`);
    }
    // A value that looks like an option is refused, as node:util does.
    if (value.length > 1 && value.startsWith("-")) {
      const also = spec.short ? ` or '-${spec.short}-XYZ'` : "";
      throw new TypeError(
        `Option '${token}' argument is ambiguous.\nDid you forget to specify the option argument for '${token}'?\nTo specify an option argument starting with a dash use '--${name}=-XYZ'${also}.`,
      );
    }
    return value;
  };
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
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=", 3);
      const token = eq > 0 ? arg.slice(0, eq) : arg;
      const name = token.slice(2);
      if (!name || !Object.hasOwn(options, name)) throw unknown(token);
      if (options[name].type === "boolean") {
        if (eq > 0) {
          throw new TypeError(`Option '--${name}' does not take an argument`);
        }
        values[name] = true;
      } else if (eq > 0) {
        values[name] = arg.slice(eq + 1);
      } else {
        values[name] = valueOf(name, token, i++);
      }
      continue;
    }
    // -x, -xVALUE for a string option, or -abc: flags a, b and c (a string
    // option among them takes the rest of the argument as its value).
    for (let k = 1; k < arg.length; k++) {
      const token = `-${arg[k]}`;
      const name = byShort.get(arg[k]);
      if (name === undefined) throw unknown(token);
      if (options[name].type === "boolean") {
        values[name] = true;
        continue;
      }
      if (k + 1 < arg.length) values[name] = arg.slice(k + 1);
      else values[name] = valueOf(name, token, i++);
      break;
    }
  }
  return { values, positionals };
}
