/**
 * `snapshot`'s own entry point, which ./stompwatch runs bundled as it runs
 * each analysis (`cli/check_leaks_main.ts` says why).
 *
 * @module
 */
import { exitWith } from "./_top.ts";
import { printLines } from "./_stdout.ts";
import { readSmallLogPiecesOnLoop } from "../ffi/bindings.ts";
import { snapshotCli } from "./snapshot.ts";

/**
 * Runs `snapshot` with its arguments, prints what it wrote and warns on
 * stderr; returns the exit code.
 *
 * @example
 * ```ts ignore
 * const code = await snapshotCommand(["--input", "a.csv", "-o", "a.pickle"]);
 * ```
 */
export async function snapshotCommand(args: string[]): Promise<number> {
  readSmallLogPiecesOnLoop();
  const { lines, warnings } = await snapshotCli(args);
  printLines(lines);
  for (const line of warnings) console.error(line);
  return 0;
}

if (import.meta.main) await exitWith(() => snapshotCommand(Deno.args));
