/**
 * `check-leaks`' own entry point. ./stompwatch runs it bundled into one file
 * (`ffi/build/check-leaks.js`), as it runs each analysis: before a
 * program's first line Deno reads, resolves and compiles every module it
 * may import by a literal name, dynamic imports included, and one entry for
 * all three analyses made each load the other two's modules too.
 *
 * @module
 */
import { exitWith } from "./_top.ts";
import { printLines } from "./_stdout.ts";
import { readSmallLogPiecesOnLoop } from "../ffi/bindings.ts";
import { checkLeaksCli } from "./check_leaks.ts";

/**
 * Runs `check-leaks` with its arguments and prints what it found; returns
 * the exit code (1: leaks, 0: none, 2: no device could be checked).
 *
 * @example
 * ```ts ignore
 * const code = await checkLeaksCommand(["--input", "a.csv", "--mstx-info", "step"]);
 * ```
 */
export async function checkLeaksCommand(args: string[]): Promise<number> {
  // A command line serves no one else: small reads need no thread.
  readSmallLogPiecesOnLoop();
  const { lines, code } = await checkLeaksCli(args);
  printLines(lines);
  return code;
}

if (import.meta.main) await exitWith(() => checkLeaksCommand(Deno.args));
