/**
 * The offline analyses' own entry point: `check-leaks`, `compare` and
 * `snapshot`, which ./stompwatch runs here rather than through main.ts.
 * Before a program's first line runs, Deno loads every module it may
 * import by a literal name, dynamic imports included: main.ts's way to the
 * daemon (hono and all its modules) cost each analysis 7-10 ms of start-up
 * that way, on commands timed whole.
 *
 * @module
 */
import { parse, UsageError } from "./_usage.ts";
import { exitWith } from "./_top.ts";
import { printLines } from "./_stdout.ts";

async function compareCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, ["input", "level", "output"]);
  if (positionals.length) {
    throw new UsageError(
      `Unexpected argument: ${
        positionals[0]
      }; give both logs as --input BASE.csv,COMPARE.csv`,
    );
  }
  const { compareSummary, runCompare } = await import("./compare.ts");
  const { path, rows } = await runCompare({
    input: values.input as string | undefined,
    level: values.level as string | undefined,
    outputDir: values.output as string ?? "stompwatch_out",
    at: new Date(),
  });
  printLines(compareSummary(path, rows));
  return 0;
}

/**
 * Runs the analysis `cmd` (check-leaks, compare or snapshot) with its arguments and
 * prints what it found; returns the exit code.
 *
 * @example
 * ```ts ignore
 * const code = await analysisCommand("snapshot", ["--input", "a.csv", "-o", "a.pickle"]);
 * ```
 */
export async function analysisCommand(
  cmd: string,
  rest: string[],
): Promise<number> {
  // A command line serves no one else: small reads need no thread.
  const { readSmallLogPiecesOnLoop } = await import("../ffi/bindings.ts");
  readSmallLogPiecesOnLoop();
  switch (cmd) {
    case "compare":
      return await compareCommand(rest);
    case "check-leaks": {
      const { checkLeaksCli } = await import("./check_leaks.ts");
      const { lines, code } = await checkLeaksCli(rest);
      printLines(lines);
      return code;
    }
    case "snapshot": {
      const { snapshotCli } = await import("./snapshot.ts");
      const { lines, warnings } = await snapshotCli(rest);
      printLines(lines);
      for (const line of warnings) console.error(line);
      return 0;
    }
    default:
      throw new UsageError(`Not an analysis: ${cmd}`);
  }
}

if (import.meta.main) {
  const [cmd, ...rest] = Deno.args;
  await exitWith(() => analysisCommand(cmd, rest));
}
