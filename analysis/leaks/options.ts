/**
 * The options of check_leaks and their rules, in one place: the command line
 * (`--mstx-info`...), the HTTP API (`mstx_info`...) and the library all check
 * them here, and each front end only says how it spells them (its
 * {@linkcode OptionNames}, kept beside that front end).
 *
 * @module
 */

/** Event Types a memory row can carry (SPEC section 2). */
export const MEMORY_POOLS = [
  "HAL",
  "PTA",
  "ATB",
  "MINDSPORE",
  "HOST",
  "HOST_PINNED",
] as const;

/**
 * What a check reads of each listed leak (CheckLeaksOptions.detail): its
 * whole row, or what a printed leak shows.
 */
export type LeakDetail = "all" | "printed";

/** Options of check_leaks, as the library takes them. */
export interface CheckLeaksOptions {
  /** Name of the mstx marks that delimit the window (`mstx_info`). */
  mstxInfo: string;
  /** Which matching mark is A (`start_index`); default 0. */
  startIndex?: number;
  /**
   * The start index as its user wrote it, for messages: a command line may
   * give more digits than a number holds exactly (msMemScope prints them
   * as given). Default: the number's own digits.
   */
  startIndexText?: string;
  /** Pool whose MALLOC/FREE rows count; default HAL, as the real tool. */
  eventType?: string;
  /**
   * Most memory rows kept in memory at once (about 41 bytes each); past it
   * the file is read again, a share of the addresses per pass. Default
   * 2.5M (103 MB): a window of that many memory rows is replayed from
   * memory within the 256 MB a check may take (200 MB at most measured).
   */
  rowBudget?: number;
  /**
   * Most leaks listed with their details, over all devices (the first by
   * device, then ID); the rest are counted in `leakCount`, `leakedBytes` and
   * `unlisted`. Default 10,000 (a few hundred bytes each).
   */
  maxLeaks?: number;
  /**
   * What is read of each listed leak: `"all"` (the default) its row's
   * timestamp, pid, tid and owner too; `"printed"` only what
   * formatCheckLeaks prints (the rest left empty: "", NaN, no owner).
   */
  detail?: LeakDetail;
}

/** The options once checked, defaults filled in. */
export type CheckedOptions = Required<CheckLeaksOptions>;

/** Options that cannot be used, worded for a person. */
export class CheckLeaksError extends Error {
  override name = "CheckLeaksError";
}

/** How a front end spells each option in its messages. */
export interface OptionNames {
  mstxInfo: string;
  startIndex: string;
  eventType: string;
  maxLeaks: string;
  /** Shows a bad value as the front end's user wrote it. */
  show: (value: unknown) => string;
  /** Numbers arrive as the text typed (a command line), not as numbers. */
  numbersAsText?: boolean;
}

/** The library's own spelling (option names of {@link CheckLeaksOptions}). */
export const LIBRARY_NAMES: OptionNames = {
  mstxInfo: "mstxInfo",
  startIndex: "startIndex",
  eventType: "eventType",
  maxLeaks: "maxLeaks",
  show: (v) => typeof v === "string" ? JSON.stringify(v) : String(v),
};

/** Options as a front end received them, unchecked. */
export interface RawOptions {
  mstxInfo?: unknown;
  startIndex?: unknown;
  startIndexText?: unknown;
  eventType?: unknown;
  maxLeaks?: unknown;
  rowBudget?: unknown;
  detail?: unknown;
}

const DEFAULT_MAX_LEAKS = 10_000;
// A window's rows kept (41 bytes each) and then replayed from memory (about
// 23 more each) take 200 MB at most at this budget, in all; 3M took 229 MB
// (README, "check-leaks").
const DEFAULT_ROW_BUDGET = 2_500_000;

/**
 * A whole number from 0: a number, or (on the command line) its digits. One
 * past 2^53 is kept, inexact: it can only mean "beyond every mark", as the
 * real tool, whose integers have no bound, then reports.
 */
function wholeNumber(value: unknown, names: OptionNames): number | undefined {
  if (typeof value === "string" && names.numbersAsText) {
    return /^\d+$/.test(value) ? Number(value) : undefined;
  }
  return typeof value === "number" && Number.isInteger(value) && value >= 0
    ? value
    : undefined;
}

// Python's int() of the digits: leading zeros dropped, every digit kept.
function indexText(raw: RawOptions, startIndex: number): string {
  if (typeof raw.startIndexText === "string") return raw.startIndexText;
  if (typeof raw.startIndex === "string") {
    return BigInt(raw.startIndex).toString();
  }
  return BigInt(startIndex).toString();
}

/**
 * Checks check_leaks options and fills in the defaults (start index 0, HAL,
 * 10,000 listed leaks). Every rule lives here; a bad value throws
 * {@link CheckLeaksError} naming the option as `names` spells it.
 *
 * @example
 * ```ts
 * import { checkOptions } from "./options.ts";
 * checkOptions({ mstxInfo: "step", startIndex: 1 });
 * // { mstxInfo: "step", startIndex: 1, startIndexText: "1", eventType: "HAL",
 * //   maxLeaks: 10000, rowBudget: 2500000, detail: "all" }
 * ```
 */
export function checkOptions(
  raw: RawOptions,
  names: OptionNames = LIBRARY_NAMES,
): CheckedOptions {
  const { mstxInfo } = raw;
  if (typeof mstxInfo !== "string" || mstxInfo.trim() === "") {
    const what = mstxInfo === undefined || mstxInfo === null
      ? "Missing"
      : typeof mstxInfo === "string"
      ? "Empty"
      : "Invalid";
    throw new CheckLeaksError(
      `${what} ${names.mstxInfo}: give the message of the mstx marks A, B and C, e.g. step`,
    );
  }
  const startIndex = wholeNumber(raw.startIndex ?? 0, names);
  if (startIndex === undefined) {
    throw new CheckLeaksError(
      `Invalid ${names.startIndex} value: ${
        names.show(raw.startIndex)
      }; use a whole number from 0 (0 = the first mark named ${mstxInfo})`,
    );
  }
  const eventType = raw.eventType ?? "HAL";
  const pool = typeof eventType === "string" ? eventType.toUpperCase() : "";
  if (!(MEMORY_POOLS as readonly string[]).includes(pool)) {
    throw new CheckLeaksError(
      `Invalid ${names.eventType} value: ${names.show(eventType)}; use one of ${
        MEMORY_POOLS.join(", ")
      }`,
    );
  }
  const maxLeaks = wholeNumber(raw.maxLeaks ?? DEFAULT_MAX_LEAKS, names);
  if (maxLeaks === undefined) {
    throw new CheckLeaksError(
      `Invalid ${names.maxLeaks} value: ${
        names.show(raw.maxLeaks)
      }; use a whole number from 0 (leaks listed in detail, default ${DEFAULT_MAX_LEAKS})`,
    );
  }
  const rowBudget = raw.rowBudget ?? DEFAULT_ROW_BUDGET;
  if (
    typeof rowBudget !== "number" ||
    !(rowBudget === Infinity || Number.isInteger(rowBudget) && rowBudget >= 1)
  ) {
    throw new CheckLeaksError(
      `Invalid row budget: ${rowBudget}; use a whole number from 1`,
    );
  }
  const detail = raw.detail ?? "all";
  if (detail !== "all" && detail !== "printed") {
    throw new CheckLeaksError(
      `Invalid detail: ${names.show(detail)}; use "all" or "printed"`,
    );
  }
  return {
    mstxInfo,
    startIndex,
    startIndexText: indexText(raw, startIndex),
    eventType: pool,
    maxLeaks,
    rowBudget,
    detail,
  };
}
