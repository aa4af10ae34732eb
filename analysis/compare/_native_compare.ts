/**
 * compare in native code (`ffi/daemon/compare.c`): the rows and CSV lines
 * of `readStep` and `compareSteps`, without handing each row of
 * either log to JavaScript. The headers are read and checked by the
 * TypeScript reader and the refusals made by `comparableFramework` (their
 * errors are the ones a person sees); the rows, the alignment and the CSV
 * lines natively. Undefined where the native side cannot give the same
 * answer for certain (it says so rather than guess): the caller then runs
 * the TypeScript comparison, which is also the one the tests hold this to.
 *
 * @module
 */
import {
  eventLogFd,
  MEMSCOPE_HEADER,
  MemscopeCsvError,
  openEventLog,
  readMemscopeStart,
} from "../memscope_csv/mod.ts";
import { rowRunsOn } from "../memscope_csv/read.ts";
import {
  compareRead,
  CompareReadError,
  RowRunsOnError,
} from "../../ffi/bindings.ts";
import { COMPARE_COLUMNS, type CompareLevel, type Framework } from "./_step.ts";
import type { CompareColumns } from "./columns.ts";
import { comparableFramework } from "./compare.ts";
import { DEFAULT_TRACE_BUDGET } from "./myers_diff.ts";

/** Header positions of the columns, in the order compare.c reads them. */
const HEADER_AT = COMPARE_COLUMNS.map((c) => MEMSCOPE_HEADER.indexOf(c));

/** compare.c's framework bits and ids. */
const FRAMEWORK_BITS: ReadonlyArray<[Framework, number]> = [
  ["PTA", 1],
  ["MINDSPORE", 2],
];

/**
 * What {@link nativeCompare} gives: the rows, and their CSV data lines
 * (read them before disposing of it, which frees the native side).
 */
export interface NativeCompare extends Disposable {
  columns: CompareColumns;
  /** Every row's line of `memory_compare_*.csv`, newline-terminated, in chunks. */
  lines: Iterable<Uint8Array>;
}

/**
 * Compares the logs at `paths` (base, compare) natively, or undefined to
 * run the TypeScript comparison. Throws what `readStep` and
 * `compareSteps` throw for the same input.
 *
 * @example
 * ```ts ignore
 * const native = await nativeCompare(["a.csv", "b.csv"], ["op"]);
 * ```
 */
export async function nativeCompare(
  paths: readonly [string, string],
  levels: readonly CompareLevel[],
): Promise<NativeCompare | undefined> {
  // One log after the other, as readStep reads them: the same first error.
  // The reader's own reads (READ_BYTES), where a first row too long for
  // its first 64 KiB is scanned: smaller ones refuse other long rows.
  const header = { columns: COMPARE_COLUMNS };
  using base = await openEventLog(paths[0]);
  const baseStart = await readMemscopeStart(base, header);
  using next = await openEventLog(paths[1]);
  const nextStart = await readMemscopeStart(next, header);
  const fds = [eventLogFd(base.file), eventLogFd(next.file)];
  if (
    !baseStart || !nextStart || fds[0] === undefined || fds[1] === undefined
  ) {
    return undefined;
  }
  const input = (fd: number, start: typeof baseStart) => ({
    fd,
    columns: HEADER_AT.map((k) => start.columns.at[k]),
    offset: start.offset,
    line: start.line,
  });
  const levelBits = (levels.includes("op") ? 1 : 0) |
    (levels.includes("kernel") ? 2 : 0);
  let read;
  try {
    read = await compareRead(
      [input(fds[0], baseStart), input(fds[1], nextStart)],
      levelBits,
    );
  } catch (e) {
    const which = e instanceof CompareReadError ? [paths[e.log]] : paths;
    const cause = e instanceof CompareReadError ? e.cause : e;
    if (cause instanceof RowRunsOnError) throw rowRunsOn(cause.line, which[0]);
    throw new MemscopeCsvError(
      `Cannot read ${which.join(" or ")}: ${(e as Error).message}`,
    );
  }
  if (read === undefined) return undefined;
  using run = read;
  const [b, c] = run.counts.map((counts, s) => ({
    label: paths[s],
    levels,
    frameworks: FRAMEWORK_BITS.filter(([, bit]) => counts.frameworks & bit)
      .map(([f]) => f),
    aligned: counts.aligned,
    deviceRows: counts.deviceRows,
  }));
  const framework = comparableFramework(b, c);
  const id = FRAMEWORK_BITS.find(([f]) => f === framework)?.[1] ?? 0;
  const columns = await run.diff(id, DEFAULT_TRACE_BUDGET);
  if (columns === undefined) return undefined;
  // The caller frees the native side once the lines are written.
  const held = run.move();
  return {
    columns,
    lines: { [Symbol.iterator]: () => held.lines() },
    [Symbol.dispose]: () => held[Symbol.dispose](),
  };
}
