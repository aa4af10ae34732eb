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
import { type Framework, LEVEL_EVENT_TYPES, type StepLog } from "./_step.ts";

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

/** The pool every op takes its memory from; throws when the logs disagree. */
function frameworkOf(
  base: StepCounts,
  compare: StepCounts,
): Framework | undefined {
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

/**
 * Refuses what msMemScope cannot compare either: a log with no rows on any
 * device, or two logs with no rows of the level between them. One log
 * without rows of the level is fine: every row of the other is one-sided.
 */
function checkComparable(base: StepCounts, compare: StepCounts): void {
  for (const log of [base, compare]) {
    if (log.deviceRows === 0) {
      throw new CompareError(
        `Cannot compare ${log.label}: it has no rows on any device; pass an msMemScope event log of a training step`,
      );
    }
  }
  if (base.aligned > 0 || compare.aligned > 0) return;
  const levels = base.levels;
  const types = levels.flatMap((l) => LEVEL_EVENT_TYPES[l]).join(" or ");
  const other = levels.length === 1
    ? `; try --level ${levels[0] === "op" ? "kernel" : "op"}`
    : "";
  throw new CompareError(
    `No ${
      levels.join(",")
    }-level rows in ${base.label} or ${compare.label}: neither has ${types} events on any device${other}`,
  );
}

/** What the refusals of a comparison look at in each log. */
export type StepCounts = Pick<
  StepLog,
  "label" | "levels" | "frameworks" | "aligned" | "deviceRows"
>;

/**
 * The framework pool two logs' ops take their memory from, after every
 * refusal of a comparison msMemScope cannot make either (each a
 * {@link CompareError} with a one-line message): logs read at other
 * levels, a log with no rows on any device, no rows of the level in
 * either, logs of two frameworks, MindSpore at op level.
 *
 * @example
 * ```ts
 * import { comparableFramework } from "./compare.ts";
 * const log = { label: "a.csv", levels: ["op"] as const, frameworks: ["PTA" as const],
 *   aligned: 3, deviceRows: 9 };
 * comparableFramework(log, { ...log, label: "b.csv" }); // "PTA"
 * ```
 */
export function comparableFramework(
  base: StepCounts,
  compare: StepCounts,
): Framework | undefined {
  if (base.levels.join() !== compare.levels.join()) {
    throw new CompareError(
      `Cannot compare ${base.label} read at level ${base.levels} with ${compare.label} read at level ${compare.levels}`,
    );
  }
  checkComparable(base, compare);
  return frameworkOf(base, compare);
}

/**
 * Compares two steps' logs: per device (ascending), every aligned op or
 * kernel with its memory in each, in the order of the edit script. An op
 * on one side only (a whole log may have none) gets `null` on the other, as
 * msMemScope writes `N/A`.
 *
 * @example
 * ```ts
 * import { compareSteps, stepFromBytes } from "./mod.ts";
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
  const framework = comparableFramework(base, compare);
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
    const toCommon = (texts: string[]) => {
      // Each text once through the map, not each row.
      const known = new Int32Array(texts.length).fill(-1);
      return (id: number) => {
        if (known[id] >= 0) return known[id];
        const text = texts[id];
        let c = common.get(text);
        if (c === undefined) common.set(text, c = common.size);
        return known[id] = c;
      };
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
