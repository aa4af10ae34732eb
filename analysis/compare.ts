/**
 * `compare`: which ops (or kernels) of one training step take more memory
 * than the same ops of another, as msMemScope's `--compare` finds them and
 * writes them to `compare/memory_compare_{timestamp}.csv` (SPEC section 4).
 *
 * Per device, the names of the aligned rows of both logs are matched with a
 * Myers diff; an op's memory is the Attr `size` of the first framework-pool
 * row (PTA, or MINDSPORE) at or after it in time order, whether that row is
 * a MALLOC or a FREE, and 0 when there is none. A name on one side only shows
 * `N/A` on the other, which counts as 0 in the diff (compare - base), as in
 * the real tool.
 *
 * @module
 */
import { myersDiff } from "./myers_diff.ts";
import {
  type CompareLevel,
  type Framework,
  LEVEL_EVENT_TYPES,
  readStep,
  type StepLog,
} from "./_compare_step.ts";
import { csvField, MemscopeCsvError } from "./memscope_csv.ts";

export {
  type CompareLevel,
  readStep,
  stepFromBytes,
  type StepLog,
} from "./_compare_step.ts";

/** The two header lines of `memory_compare_*.csv`. */
export const COMPARE_HEADER = ",,,Base,Compare\n" +
  "Event,Name,Device Id,Allocated Memory(byte),Allocated Memory(byte),Diff Memory(byte)";

/** One row of the comparison; `null` is a side the name is missing from. */
export interface CompareRow {
  event: string;
  name: string;
  device: number;
  base: number | null;
  compare: number | null;
  /** compare - base, a missing side counting as 0. */
  diff: number;
}

/** A comparison that cannot be made, with a message fit to show as is. */
export class CompareError extends Error {
  override name = "CompareError";
}

/**
 * Parses `--level`: `op` (the real tool's default), `kernel`, or both
 * separated by a comma (ASCII or full-width).
 *
 * @example
 * ```ts
 * import { parseCompareLevel } from "./compare.ts";
 * parseCompareLevel("kernel"); // ["kernel"]
 * parseCompareLevel(undefined); // ["op"]
 * ```
 */
export function parseCompareLevel(value: string | undefined): CompareLevel[] {
  if (value === undefined) return ["op"];
  const parts = value.split(/[,，]/).filter((p) => p !== "");
  if (parts.length === 0 || parts.some((p) => p !== "op" && p !== "kernel")) {
    throw new CompareError(
      `Invalid --level value: ${value}; use op (default), kernel, or op,kernel`,
    );
  }
  const levels = new Set(parts);
  return (["op", "kernel"] as const).filter((l) => levels.has(l));
}

/**
 * Splits `--input` into the base and compare paths: two paths separated by
 * a comma, ASCII or full-width as the real tool allows; empty parts are
 * skipped.
 *
 * @example
 * ```ts
 * import { parseCompareInput } from "./compare.ts";
 * parseCompareInput("step1.csv，step2.csv"); // ["step1.csv", "step2.csv"]
 * ```
 */
export function parseCompareInput(value: string | undefined): [string, string] {
  if (value === undefined) {
    throw new CompareError(
      "compare needs --input BASE.csv,COMPARE.csv: the two event logs to compare",
    );
  }
  const paths = value.split(/[,，]/).filter((p) => p !== "");
  if (paths.length !== 2) {
    throw new CompareError(
      `Invalid --input value: ${value}; give exactly two event logs separated by a comma, as --input BASE.csv,COMPARE.csv`,
    );
  }
  return [paths[0], paths[1]];
}

/** The pool every op takes its memory from; throws when the logs disagree. */
function frameworkOf(base: StepLog, compare: StepLog): Framework | undefined {
  for (const log of [base, compare]) {
    if (log.frameworks.length > 1) {
      throw new CompareError(
        `Cannot compare ${log.label}: it holds both PTA and MINDSPORE memory rows; compare logs of one framework`,
      );
    }
  }
  const [a] = base.frameworks;
  const [b] = compare.frameworks;
  if (a !== undefined && b !== undefined && a !== b) {
    throw new CompareError(
      `Cannot compare ${base.label} (${a}) with ${compare.label} (${b}): the two logs come from different frameworks`,
    );
  }
  const framework = a ?? b;
  if (framework === "MINDSPORE" && base.levels.includes("op")) {
    throw new CompareError(
      `Cannot compare MindSpore logs at op level: ${base.label} holds MINDSPORE memory rows; use --level kernel`,
    );
  }
  return framework;
}

function checkAligned(log: StepLog): void {
  if (log.aligned > 0) return;
  const levels = log.levels;
  const types = levels.flatMap((l) => LEVEL_EVENT_TYPES[l]).join(" or ");
  const other = levels.length === 1
    ? `; try --level ${levels[0] === "op" ? "kernel" : "op"}`
    : "";
  throw new CompareError(
    `No ${
      levels.join(",")
    }-level rows in ${log.label}: it has no ${types} events on any device${other}`,
  );
}

/**
 * Compares two steps' logs: per device (ascending), every aligned op or
 * kernel with its memory in each, in the order of the edit script.
 *
 * @example
 * ```ts
 * import { compareSteps, stepFromBytes } from "./compare.ts";
 * const head = "ID,Event,Event Type,Name,Timestamp(ns),Process Id," +
 *   "Thread Id,Device Id,Ptr,Attr\n";
 * const step = (size: number) =>
 *   stepFromBytes(
 *     new TextEncoder().encode(head +
 *       "1,OP_LAUNCH,ATEN_END,aten.mm,1,1,1,0,N/A,\n" +
 *       `2,MALLOC,PTA,N/A,2,1,1,0,0x10,"{size:${size}}"\n`),
 *     { label: "step.csv", levels: ["op"] },
 *   );
 * compareSteps(step(512), step(1536));
 * // [{ event: "OP_LAUNCH", name: "aten.mm", device: 0, base: 512,
 * //    compare: 1536, diff: 1024 }]
 * ```
 */
export function compareSteps(
  base: StepLog,
  compare: StepLog,
): CompareRow[] {
  if (base.levels.join() !== compare.levels.join()) {
    throw new CompareError(
      `Cannot compare ${base.label} read at level ${base.levels} with ${compare.label} read at level ${compare.levels}`,
    );
  }
  checkAligned(base);
  checkAligned(compare);
  const framework = frameworkOf(base, compare);
  const devices = [
    ...new Set([...base.devices.keys(), ...compare.devices.keys()]),
  ]
    .sort((x, y) => x - y);
  const out: CompareRow[] = [];
  for (const device of devices) {
    const empty = { names: [], events: [], memory: [] };
    const a = base.devices.get(device)?.aligned(framework) ?? empty;
    const b = compare.devices.get(device)?.aligned(framework) ?? empty;
    // The diff compares names as small integers common to both logs.
    const common = new Map<string, number>();
    const toCommon = (texts: string[]) => (id: number) => {
      const text = texts[id];
      let c = common.get(text);
      if (c === undefined) common.set(text, c = common.size);
      return c;
    };
    const edits = myersDiff(
      Int32Array.from(a.names, toCommon(base.texts)),
      Int32Array.from(b.names, toCommon(compare.texts)),
    );
    for (const edit of edits) {
      const baseBytes = edit.kind === "insert" ? null : a.memory[edit.a];
      const compareBytes = edit.kind === "delete" ? null : b.memory[edit.b];
      // The compare side names the row when it has one, as in the real tool.
      const [side, texts, i] = edit.kind === "delete"
        ? [a, base.texts, edit.a]
        : [b, compare.texts, edit.b];
      out.push({
        event: texts[side.events[i]],
        name: texts[side.names[i]],
        device,
        base: baseBytes,
        compare: compareBytes,
        diff: (compareBytes ?? 0) - (baseBytes ?? 0),
      });
    }
  }
  return out;
}

/**
 * One data line of `memory_compare_*.csv` (no newline); the name is quoted
 * when it holds a comma, a quote or a newline.
 *
 * @example
 * ```ts
 * import { compareCsvLine } from "./compare.ts";
 * compareCsvLine({
 *   event: "OP_LAUNCH", name: "aten.randn", device: 0,
 *   base: null, compare: 4000256, diff: 4000256,
 * }); // "OP_LAUNCH,aten.randn,0,N/A,4000256,4000256"
 * ```
 */
export function compareCsvLine(row: CompareRow): string {
  return [
    csvField(row.event),
    csvField(row.name),
    row.device,
    row.base ?? "N/A",
    row.compare ?? "N/A",
    row.diff,
  ].join(",");
}

/**
 * Writes `{outputDir}/compare/memory_compare_{stamp}.csv`: directories made
 * 0700 when missing, the file 0600, written to a part file and renamed so
 * that no reader sees it half-written. Returns the path written.
 *
 * @example
 * ```ts
 * import { writeCompareCsv } from "./compare.ts";
 * const dir = Deno.makeTempDirSync();
 * await writeCompareCsv(dir, [], { stamp: "20261120231733" });
 * // `${dir}/compare/memory_compare_20261120231733.csv`
 * ```
 */
export async function writeCompareCsv(
  outputDir: string,
  rows: readonly CompareRow[],
  options: { stamp: string },
): Promise<string> {
  const { stamp } = options;
  const dir = `${outputDir.replace(/\/+$/, "") || "/"}/compare`;
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const path = `${dir}/memory_compare_${stamp}.csv`;
  const part = `${path}.part`;
  const encoder = new TextEncoder();
  {
    using file = await Deno.open(part, {
      write: true,
      create: true,
      truncate: true,
      mode: 0o600,
    });
    await Deno.chmod(part, 0o600);
    let chunk = COMPARE_HEADER + "\n";
    for (const row of rows) {
      chunk += compareCsvLine(row) + "\n";
      if (chunk.length >= 1 << 20) {
        await writeAll(file, encoder.encode(chunk));
        chunk = "";
      }
    }
    await writeAll(file, encoder.encode(chunk));
  }
  await Deno.rename(part, path);
  return path;
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  for (let done = 0; done < bytes.length;) {
    done += await file.write(bytes.subarray(done));
  }
}

/**
 * The `count` rows with the largest |diff| (non-zero only), largest first;
 * equal ones keep file order.
 *
 * @example
 * ```ts
 * import { largestDifferences } from "./compare.ts";
 * const row = { event: "OP_LAUNCH", name: "mm", device: 0, base: 1, compare: 1 };
 * largestDifferences([{ ...row, diff: -5 }, { ...row, diff: 0 }], 10).length; // 1
 * ```
 */
export function largestDifferences(
  rows: readonly CompareRow[],
  count: number,
): CompareRow[] {
  return rows.filter((r) => r.diff !== 0)
    .map((r, i) => [r, i] as const)
    .sort(([a, i], [b, j]) => Math.abs(b.diff) - Math.abs(a.diff) || i - j)
    .slice(0, count)
    .map(([r]) => r);
}

/**
 * What `stompwatch compare` prints: the path written, row counts, and the ten
 * largest differences in bytes and MB (2^20 bytes).
 *
 * @example
 * ```ts
 * import { compareSummary } from "./compare.ts";
 * compareSummary("out/compare/memory_compare_20261120231733.csv", [{
 *   event: "OP_LAUNCH", name: "aten.randn", device: 0,
 *   base: null, compare: 4000256, diff: 4000256,
 * }]);
 * // ["Wrote out/compare/memory_compare_20261120231733.csv: 1 row on 1 device, 0 only in base, 1 only in compare",
 * //  "Largest differences (compare - base):",
 * //  "  +4000256 B (+3.81 MB)  device 0  aten.randn  base N/A, compare 4000256"]
 * ```
 */
export function compareSummary(
  path: string,
  rows: readonly CompareRow[],
): string[] {
  const devices = new Set(rows.map((r) => r.device)).size;
  const onlyBase = rows.filter((r) => r.compare === null).length;
  const onlyCompare = rows.filter((r) => r.base === null).length;
  const plural = (n: number, word: string) =>
    `${n} ${word}${n === 1 ? "" : "s"}`;
  const lines = [
    `Wrote ${path}: ${plural(rows.length, "row")} on ${
      plural(devices, "device")
    }, ${onlyBase} only in base, ${onlyCompare} only in compare`,
  ];
  const top = largestDifferences(rows, 10);
  if (top.length === 0) {
    lines.push("No memory differences between the two logs");
    return lines;
  }
  lines.push("Largest differences (compare - base):");
  const sign = (n: number) => (n > 0 ? "+" : "-");
  for (const r of top) {
    const mb = (Math.abs(r.diff) / 1048576).toFixed(2);
    lines.push(
      `  ${sign(r.diff)}${Math.abs(r.diff)} B (${
        sign(r.diff)
      }${mb} MB)  device ${r.device}  ${r.name}  base ${
        r.base ?? "N/A"
      }, compare ${r.compare ?? "N/A"}`,
    );
  }
  return lines;
}

/** Options of {@linkcode runCompare}. */
export interface RunCompareOptions {
  /** `--input` as given. */
  input: string | undefined;
  /** `--level` as given; op when undefined. */
  level: string | undefined;
  /** Directory the `compare/` folder goes in. */
  outputDir: string;
  /** `YYYYmmddHHMMSS` of the output name. */
  stamp: string;
}

/** What {@linkcode runCompare} did. */
export interface CompareResult {
  path: string;
  rows: CompareRow[];
}

/**
 * The whole `stompwatch compare`: parses the options, reads both logs, writes
 * the CSV. Bad input throws {@link CompareError} or {@link MemscopeCsvError},
 * each with a one-line message.
 *
 * @example
 * ```ts
 * import { runCompare } from "./compare.ts";
 * const { path, rows } = await runCompare({
 *   input: "step1.csv,step2.csv",
 *   level: "op",
 *   outputDir: "stompwatch_out",
 *   stamp: "20261120231733",
 * });
 * ```
 */
export async function runCompare(
  options: RunCompareOptions,
): Promise<CompareResult> {
  const [basePath, comparePath] = parseCompareInput(options.input);
  const levels = parseCompareLevel(options.level);
  const base = await readStep(basePath, levels);
  const compare = await readStep(comparePath, levels);
  const rows = compareSteps(base, compare);
  const path = await writeCompareCsv(options.outputDir, rows, {
    stamp: options.stamp,
  });
  return { path, rows };
}

export { MemscopeCsvError };
