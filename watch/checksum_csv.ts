/**
 * Rows of `watch_dump_data_check_sum_{deviceid}_{timestamp}.csv`, byte for
 * byte what msMemScope's readers expect: header `Tensor info,Check data sum`,
 * then one row per sample whose first column is the `.bin` name without its
 * extension and whose second is the checksum as 16 lowercase hex digits.
 *
 * @module
 */

import { csvField } from "../analysis/memscope_csv/field.ts";
import { type BinNameParts, tensorInfo } from "./dump_names.ts";

/** The header line, without its line break. */
export const CHECKSUM_CSV_HEADER = "Tensor info,Check data sum";

const MAX_U64 = (1n << 64n) - 1n;

/**
 * A 64-bit checksum as 16 lowercase hex digits (`%016llx`).
 *
 * @throws {RangeError} when the value does not fit in 64 unsigned bits.
 * @example
 * ```ts
 * import { formatChecksum } from "./checksum_csv.ts";
 * formatChecksum(0xb86883e6fa710a9fn); // "b86883e6fa710a9f"
 * ```
 */
export function formatChecksum(checksum: bigint): string {
  if (checksum < 0n || checksum > MAX_U64) {
    throw new RangeError(
      `Cannot format checksum: ${checksum} does not fit in 64 unsigned bits`,
    );
  }
  return checksum.toString(16).padStart(16, "0");
}

/**
 * One checksum CSV row, without its line break.
 *
 * @throws {RangeError} as {@linkcode tensorInfo} and {@linkcode formatChecksum}.
 * @example
 * ```ts
 * import { checksumCsvRow } from "./checksum_csv.ts";
 * checksumCsvRow(
 *   { device: 0, tid: 7, op: "Mul", callCount: 2, name: "w", outid: 0, phase: "after" },
 *   0xffn,
 * ); // "0_7_Mul_2-w_0_after,00000000000000ff"
 * ```
 */
export function checksumCsvRow(parts: BinNameParts, checksum: bigint): string {
  return `${csvField(tensorInfo(parts))},${formatChecksum(checksum)}`;
}
