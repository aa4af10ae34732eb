/**
 * The command line's usage text and the parsing every command shares: a
 * mistake in the arguments is a {@link UsageError} that says what was
 * wrong, with the usage after it.
 *
 * @module
 */
import { parseArgs } from "./_parse_args.ts";

/** Every command and its options, as `stompwatch help` prints them. */
export const USAGE = `usage:
  stompwatch daemon [--output DIR] [--listen 127.0.0.1:PORT] [--checksum xxh3|crc64-msmemscope]
  stompwatch run [--watch=[start[:outid]],end[,full-content]] [--output DIR] [--daemon SOCKET]
                 [--checksum xxh3|crc64-msmemscope] [--as-msmemscope] [--events alloc,free,access]
                 [--call-stack python:N] -- CMD [ARGS...]
  stompwatch env [--output DIR] [--watch=[start[:outid]],end[,full-content]]
                                     print export lines that attach a job started by hand
  stompwatch compare --input BASE.csv,COMPARE.csv [--level op|kernel] [--output DIR]
                                     per-op memory of two steps' event logs, side by side
  stompwatch check-leaks --input F.csv --mstx-info TEXT [--start-index N] [--event-type HAL]
                         [--max-leaks N] [--json]
                                     blocks allocated between marks A and B, not freed by C
  stompwatch snapshot --input F.csv -o FILE [--device N] [--pid P] [--format pickle|json]
                      [--max-entries N]
                                     a snapshot pytorch.org/memory_viz opens, from any event log
  stompwatch test                    fmt, lint, type check, build and run every test
  stompwatch bench                   run the benchmarks`;

/**
 * The lines of {@link USAGE} for `command` (`stompwatch COMMAND --help`),
 * under the same heading; undefined for a command it does not name.
 *
 * @example
 * ```ts
 * import { usageOf } from "./_usage.ts";
 * console.log(usageOf("check-leaks"));
 * ```
 */
export function usageOf(command: string): string | undefined {
  const lines = USAGE.split("\n");
  const start = lines.findIndex((l) =>
    l.startsWith(`  stompwatch ${command} `)
  );
  if (start < 0) return undefined;
  // A command's block runs until the next command's first line.
  let end = start + 1;
  while (end < lines.length && !lines[end].startsWith("  stompwatch ")) end++;
  return [lines[0], ...lines.slice(start, end)].join("\n");
}

/** A mistake in the command line; main.ts prints its message. */
export class UsageError extends Error {}

/** Options by name, and the arguments that are not options. */
export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/**
 * `args` parsed with `names` as string options; an unknown option or an
 * empty value is a {@link UsageError}.
 *
 * @example
 * ```ts
 * import { parse } from "./_usage.ts";
 * const { values } = parse(["--input", "a.csv"], ["input"]);
 * ```
 */
export function parse(args: string[], names: string[]): Parsed {
  const options = Object.fromEntries(
    names.map((n) => [n, { type: "string" as const }]),
  );
  let parsed: Parsed;
  try {
    parsed = parseArgs(args, options);
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\n${USAGE}`);
  }
  // `--output ''` would be the working directory, `--listen ''` no listener.
  for (const [name, value] of Object.entries(parsed.values)) {
    if (value === "") {
      throw new UsageError(
        `Empty value for --${name}: give it a value or leave the option out\n${USAGE}`,
      );
    }
  }
  return parsed;
}
