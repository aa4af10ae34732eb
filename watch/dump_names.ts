/**
 * Names of the files in `OUT/watch_dump`, as the seed documents spell them:
 * `{deviceid}_{tid}_{opName}_{callCount}-{watchedName}_{outid}_{before|after}.bin`
 * and `watch_dump_data_check_sum_{deviceid}_{timestamp}.csv`.
 *
 * @module
 */

import { fileStamp } from "../analysis/files.ts";
import { MAX_FILE_NAME_BYTES, utf8ByteLength } from "./limits.ts";

/** Everything a `.bin` name (or a checksum row's first column) is made of. */
export interface BinNameParts {
  device: number;
  tid: number;
  /** Op name as reported; `/` becomes `.` in the file name. */
  op: string;
  callCount: number;
  /** Watch name (the user's, or the start op's for a CLI window). */
  name: string;
  outid: number;
  phase: "before" | "after";
}

/**
 * Makes an op or watch name safe as part of one file name: every `/` becomes
 * `.` (as the real tool does), and so does every control character, NUL
 * included, which could otherwise cut or garble the name.
 *
 * @example
 * ```ts
 * import { sanitizeNamePart } from "./dump_names.ts";
 * sanitizeNamePart("0/0_ElewiseOperation"); // "0.0_ElewiseOperation"
 * ```
 */
export function sanitizeNamePart(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[/\u0000-\u001f\u007f]/g, ".");
}

/**
 * The `.bin` name without its extension: column 1 of a checksum CSV row.
 *
 * @throws {RangeError} when a number is not a non-negative safe integer, or the
 * name would exceed 255 bytes.
 * @example
 * ```ts
 * import { tensorInfo } from "./dump_names.ts";
 * tensorInfo({ device: 0, tid: 1234, op: "aten/add", callCount: 3, name: "w", outid: 0, phase: "after" });
 * // "0_1234_aten.add_3-w_0_after"
 * ```
 */
export function tensorInfo(parts: BinNameParts): string {
  for (const key of ["device", "tid", "callCount", "outid"] as const) {
    const value = parts[key];
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(
        `Cannot name dump file: ${key} ${value} is not a non-negative integer`,
      );
    }
  }
  const { device, tid, op, callCount, name, outid, phase } = parts;
  const stem = `${device}_${tid}_${sanitizeNamePart(op)}_${callCount}-${
    sanitizeNamePart(name)
  }_${outid}_${phase}`;
  if (utf8ByteLength(stem) + 4 > MAX_FILE_NAME_BYTES) {
    throw new RangeError(
      `Cannot name dump file: ${stem}.bin is longer than ${MAX_FILE_NAME_BYTES} bytes`,
    );
  }
  return stem;
}

/**
 * The `.bin` file name of one before or after sample; with `taken` > 0,
 * the name it takes when the first `taken` names are held by earlier
 * dumps (names carry no pid): `{name}.{taken}.bin`.
 *
 * @throws {RangeError} as {@linkcode tensorInfo}, and when the suffix
 * makes the name longer than 255 bytes.
 * @example
 * ```ts
 * import { binFileName } from "./dump_names.ts";
 * binFileName({ device: 0, tid: 7, op: "Copy", callCount: 1, name: "w", outid: 0, phase: "before" });
 * // "0_7_Copy_1-w_0_before.bin"
 * binFileName({ device: 0, tid: 7, op: "Copy", callCount: 1, name: "w", outid: 0, phase: "before" }, 2);
 * // "0_7_Copy_1-w_0_before.2.bin"
 * ```
 */
export function binFileName(parts: BinNameParts, taken = 0): string {
  const stem = tensorInfo(parts);
  if (taken === 0) return `${stem}.bin`;
  const name = `${stem}.${taken}.bin`;
  if (utf8ByteLength(name) > MAX_FILE_NAME_BYTES) {
    throw new RangeError(
      `Cannot name dump file: ${name} is longer than ${MAX_FILE_NAME_BYTES} bytes`,
    );
  }
  return name;
}

/**
 * What every name {@linkcode checksumCsvName} makes matches.
 *
 * @example
 * ```ts
 * import { CHECKSUM_CSV_NAME } from "./dump_names.ts";
 * CHECKSUM_CSV_NAME.test("watch_dump_data_check_sum_0_20260102030405.csv"); // true
 * ```
 */
export const CHECKSUM_CSV_NAME = /^watch_dump_data_check_sum_\d+_\d{14}\.csv$/;

/**
 * The checksum CSV name of one device; the timestamp is local time.
 *
 * @example
 * ```ts
 * import { checksumCsvName } from "./dump_names.ts";
 * checksumCsvName(0, new Date(2026, 0, 2, 3, 4, 5));
 * // "watch_dump_data_check_sum_0_20260102030405.csv"
 * ```
 */
export function checksumCsvName(
  device: number,
  date: Date = new Date(),
): string {
  if (!Number.isSafeInteger(device) || device < 0) {
    throw new RangeError(
      `Cannot name checksum file: device ${device} is not a non-negative integer`,
    );
  }
  return `watch_dump_data_check_sum_${device}_${fileStamp(date)}.csv`;
}
