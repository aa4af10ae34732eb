/**
 * `stompwatch check-leaks`: its options, read and checked, and what it
 * prints and exits with. No printing here, so that tests and the daemon can
 * call it; main.ts prints.
 *
 * @module
 */
import { shownText } from "../analysis/shown_text.ts";
import { parseCommandArgs } from "./_args.ts";
// Straight from the files, not the folder's face (which also holds the
// daemon's live leak tracking): a command loads only what it runs.
import { checkLeaksFile } from "../analysis/leaks/check_leaks.ts";
import {
  CheckLeaksError,
  checkOptions,
  type OptionNames,
} from "../analysis/leaks/options.ts";
import { formatCheckLeaks } from "../analysis/leaks/format.ts";

/** How the command line spells check_leaks options; numbers come as typed. */
const CLI_NAMES: OptionNames = {
  mstxInfo: "--mstx-info",
  startIndex: "--start-index",
  eventType: "--event-type",
  maxLeaks: "--max-leaks",
  show: (v) => shownText(String(v)),
  numbersAsText: true,
};

/** Lines for stdout and the exit code. */
export interface CliOutput {
  lines: string[];
  /** 1: leaks found; 0: none; 2: no device could be checked. */
  code: number;
}

const FLAGS =
  "--input, --mstx-info, --start-index, --event-type, --max-leaks, --json";
const VALUED = [
  "--input",
  "--mstx-info",
  "--start-index",
  "--event-type",
  "--max-leaks",
];

/**
 * Runs check-leaks with command-line arguments. Bad input throws
 * {@link CheckLeaksError} (or the reader's `MemscopeCsvError`) with one line
 * that says what is wrong and what to do.
 *
 * @example
 * ```ts
 * import { checkLeaksCli } from "./check_leaks.ts";
 * const { lines, code } = await checkLeaksCli([
 *   "--input", "memscope_dump.csv", "--mstx-info", "step",
 * ]);
 * console.log(lines.join("\n"), code);
 * ```
 */
export async function checkLeaksCli(args: string[]): Promise<CliOutput> {
  const { values } = parseCommandArgs(args, {
    options: {
      input: { type: "string" },
      "mstx-info": { type: "string" },
      "start-index": { type: "string" },
      "event-type": { type: "string" },
      "max-leaks": { type: "string" },
      json: { type: "boolean" },
    },
    valued: VALUED,
    command: "check-leaks",
    flags: FLAGS,
    fail: (m) => new CheckLeaksError(m),
  });
  const input = values.input as string | undefined;
  if (!input) {
    throw new CheckLeaksError(
      "Missing --input: give the msMemScope event log to check, e.g. --input memscope_dump_20250101120000.csv",
    );
  }
  const options = checkOptions({
    mstxInfo: values["mstx-info"],
    startIndex: values["start-index"],
    eventType: values["event-type"],
    maxLeaks: values["max-leaks"],
    // Printed, a leak shows its Ptr and ID alone: its row is read back for
    // the rest only when that goes out as JSON.
    detail: values.json ? "all" : "printed",
  }, CLI_NAMES);
  const result = await checkLeaksFile(input, options);
  if (!result.devices.length) {
    throw new CheckLeaksError(
      `Nothing to check in ${input}: no row names a device (every Device Id is N/A); check that the log covers the marked steps`,
    );
  }
  const checked = result.devices.some((d) =>
    d.status === "leaks" || d.status === "clean"
  );
  const code = result.leakCount ? 1 : checked ? 0 : 2;
  const lines = values.json
    ? [JSON.stringify(result, null, 2)]
    : formatCheckLeaks(result);
  return { lines, code };
}
