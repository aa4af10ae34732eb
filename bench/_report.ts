/**
 * The end of a bench run: the machine's lines, the table, and the same as
 * JSON in a file (`--json PATH`, or `stompwatch_out/bench/bench_{stamp}.json`
 * under the checkout), so that `bench/side_by_side.ts` can put two runs
 * next to each other.
 *
 * @module
 */
import { fileStamp } from "../analysis/files.ts";
import { type BenchRow, benchTable, type Row } from "./_jobs.ts";
import {
  type Machine,
  machine,
  machineLines,
  parallelWork,
} from "./_machine.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** What the JSON file holds. */
export interface BenchReport {
  /** When the run started, ISO 8601. */
  started: string;
  machine: Machine;
  rows: BenchRow[];
}

/** The path `--json PATH` names in `args`, or the default under the checkout. */
export function reportPath(args: readonly string[], at: Date): string {
  const i = args.indexOf("--json");
  if (i >= 0 && args[i + 1]) return args[i + 1];
  return `${ROOT}stompwatch_out/bench/bench_${fileStamp(at)}.json`;
}

/**
 * Prints the machine and the table, writes the JSON, and says where.
 *
 * @example
 * ```ts
 * import { benchTable } from "./_jobs.ts";
 * import { machine } from "./_machine.ts";
 * import { printReport } from "./_report.ts";
 * const started = new Date();
 * const m = await machine(Deno.makeTempDirSync());
 * const table = benchTable();
 * table.row("x", "2 MB/s", "1 MB/s", ">= 1 MB/s", true);
 * printReport(table, m, { started, path: "/tmp/bench.json" });
 * ```
 */
export function printReport(
  table: ReturnType<typeof benchTable>,
  m: Machine,
  options: { started: Date; path: string },
): void {
  for (const line of machineLines(m)) console.log(line);
  console.log();
  table.print();
  const report: BenchReport = {
    started: options.started.toISOString(),
    machine: m,
    rows: table.rows(),
  };
  const dir = options.path.replace(/\/[^/]*$/, "");
  if (dir && dir !== options.path) Deno.mkdirSync(dir, { recursive: true });
  Deno.writeTextFileSync(options.path, JSON.stringify(report, null, 2) + "\n");
  console.log(`\nJSON: ${options.path}`);
}

/**
 * Runs one bench file's rows on their own (`deno run -A bench/FILE.ts
 * [--json PATH]`): the machine's facts, the rows, the table and its JSON.
 *
 * @example
 * ```ts
 * import { runAlone } from "./_report.ts";
 * await runAlone(async (row) => row("what", "ours", "baseline", "target", true));
 * ```
 */
export async function runAlone(
  rows: (row: Row) => Promise<void>,
): Promise<void> {
  const started = new Date();
  const ddDir = Deno.makeTempDirSync({ prefix: "stompwatch_bench_dd_" });
  const facts = await machine(ddDir);
  Deno.removeSync(ddDir, { recursive: true });
  const table = benchTable();
  await rows(table.row);
  facts.parallelAtEnd = await parallelWork();
  printReport(table, facts, { started, path: reportPath(Deno.args, started) });
}
