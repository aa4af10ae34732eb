/**
 * What `stompwatch compare` prints once the CSV is written: the path, row
 * counts and the largest differences. No printing here; main.ts prints.
 *
 * @module
 */
import type { CompareRow } from "../analysis/compare/mod.ts";

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
