/**
 * Reads dump file names back into their parts, for `GET /dumps` filters.
 *
 * A `.bin` name is read from its anchors: device and tid are the leading
 * digits, `_{outid}_{before|after}.bin` ends it, and `_{callCount}-` separates
 * the op from the watch name. Op and watch names may hold `_`, `-` and digits,
 * so `Fill_3-a_1-b` reads both as op `Fill`, call 3, name `a_1-b` and as op
 * `Fill_3-a`, call 1, name `b`: such a name is ambiguous. The parser then
 * prefers a reading whose watch name the caller knows, else the shortest op
 * (user-chosen watch names are likelier to hold `_N-` than op names), and
 * says it guessed.
 *
 * @module
 */

import { type BinNameParts, sanitizeNamePart } from "./dump_names.ts";

/** A `.bin` name read back; op and name are as written (`/` already `.`). */
export interface ParsedBinName extends BinNameParts {
  /** More than one reading fitted and the choice was a guess. */
  ambiguous: boolean;
}

/** Hints for ambiguous names. */
export interface ParseBinNameOptions {
  /** Watch names the daemon knows (raw; they are sanitised before comparing). */
  names?: Iterable<string>;
}

const BIN_NAME = /^([0-9]+)_([0-9]+)_(.+)_([0-9]+)_(before|after)\.bin$/s;
const CSV_NAME = /^watch_dump_data_check_sum_([0-9]+)_([0-9]{14})\.csv$/;

/**
 * Every reading of a `.bin` name, shortest op first; empty when it is not one.
 *
 * @example
 * ```ts
 * import { binNameReadings } from "./parse_dump_name.ts";
 * binNameReadings("0_7_Fill_3-a_1-b_0_after.bin").length; // 2
 * ```
 */
export function binNameReadings(file: string): BinNameParts[] {
  const match = BIN_NAME.exec(file);
  if (match === null) return [];
  const [, device, tid, middle, outid, phase] = match;
  const numbers = [device, tid, outid].map(Number);
  if (!numbers.every(Number.isSafeInteger)) return [];
  const readings: BinNameParts[] = [];
  for (const split of middle.matchAll(/_([0-9]+)-/g)) {
    const op = middle.slice(0, split.index);
    const name = middle.slice(split.index + split[0].length);
    const callCount = Number(split[1]);
    if (op === "" || name === "" || !Number.isSafeInteger(callCount)) continue;
    readings.push({
      device: numbers[0],
      tid: numbers[1],
      op,
      callCount,
      name,
      outid: numbers[2],
      phase: phase as "before" | "after",
    });
  }
  return readings;
}

/**
 * Reads a `.bin` name; null when it is not one.
 *
 * @example
 * ```ts
 * import { parseBinFileName } from "./parse_dump_name.ts";
 * parseBinFileName("0_1234_torch._ops.aten.add.Tensor_3-mynorm_0_after.bin");
 * // { device: 0, tid: 1234, op: "torch._ops.aten.add.Tensor", callCount: 3,
 * //   name: "mynorm", outid: 0, phase: "after", ambiguous: false }
 * ```
 */
export function parseBinFileName(
  file: string,
  options: ParseBinNameOptions = {},
): ParsedBinName | null {
  const readings = binNameReadings(file);
  if (readings.length === 0) return null;
  const known = new Set([...(options.names ?? [])].map(sanitizeNamePart));
  const preferred = readings.filter((r) => known.has(r.name));
  const pool = preferred.length > 0 ? preferred : readings;
  return { ...pool[0], ambiguous: pool.length > 1 };
}

/**
 * Reads a checksum CSV name; null when it is not one.
 *
 * @example
 * ```ts
 * import { parseChecksumCsvName } from "./parse_dump_name.ts";
 * parseChecksumCsvName("watch_dump_data_check_sum_1_20260102030405.csv");
 * // { device: 1, timestamp: "20260102030405" }
 * ```
 */
export function parseChecksumCsvName(
  file: string,
): { device: number; timestamp: string } | null {
  const match = CSV_NAME.exec(file);
  if (match === null || !Number.isSafeInteger(Number(match[1]))) return null;
  return { device: Number(match[1]), timestamp: match[2] };
}
