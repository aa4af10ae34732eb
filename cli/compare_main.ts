/**
 * `compare`'s own entry point, which ./stompwatch runs bundled as it runs
 * each analysis (`cli/check_leaks_main.ts` says why).
 *
 * @module
 */
import { parse, UsageError } from "./_usage.ts";
import { exitWith } from "./_top.ts";
import { printLines } from "./_stdout.ts";
import { readSmallLogPiecesOnLoop } from "../ffi/bindings.ts";
import { compareSummary, runCompare } from "./compare.ts";

/**
 * Runs `compare` with its arguments and prints where its CSV went; returns
 * the exit code.
 *
 * @example
 * ```ts ignore
 * const code = await compareCommand(["--input", "a.csv,b.csv", "--level", "op"]);
 * ```
 */
export async function compareCommand(args: string[]): Promise<number> {
  readSmallLogPiecesOnLoop();
  const { values, positionals } = parse(args, ["input", "level", "output"]);
  if (positionals.length) {
    throw new UsageError(
      `Unexpected argument: ${
        positionals[0]
      }; give both logs as --input BASE.csv,COMPARE.csv`,
    );
  }
  const { path, rows } = await runCompare({
    input: values.input as string | undefined,
    level: values.level as string | undefined,
    outputDir: values.output as string ?? "stompwatch_out",
    at: new Date(),
  });
  printLines(compareSummary(path, rows));
  return 0;
}

if (import.meta.main) await exitWith(() => compareCommand(Deno.args));
