/**
 * check_leaks' printed lines: the real tool's, from a result.
 *
 * @module
 */
import type { CheckLeaksResult, Leak } from "./result.ts";
import { shownText } from "../shown_text.ts";

/**
 * A float as Python's `str()` writes it (`18.0`, `1.9073486328125e-06`): the
 * real tool is Python and prints sizes in MB that way.
 *
 * @example
 * ```ts
 * import { pythonFloat } from "./format.ts";
 * pythonFloat(2 / 1048576); // "1.9073486328125e-06"
 * ```
 */
export function pythonFloat(x: number): string {
  if (!Number.isFinite(x)) return x > 0 ? "inf" : x < 0 ? "-inf" : "nan";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  // Where Python writes no exponent, JavaScript writes none either, and
  // both write the shortest digits that read back as x.
  const size = Math.abs(x);
  if (size >= 1e-4 && size < 1e16) {
    const s = String(x);
    return s.includes(".") ? s : `${s}.0`;
  }
  const [mant, expText] = x.toExponential().split("e");
  const exp = Number(expText);
  if (exp < -4 || exp >= 16) {
    const sign = exp < 0 ? "-" : "+";
    return `${mant}e${sign}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  const s = String(x);
  return s.includes(".") || s.includes("e") ? s : `${s}.0`;
}

/**
 * The real tool's printed lines for a result, line for line (text from the
 * log through {@link shownText}): while it
 * analyses, `INFO: Starting to analyze data for device {d}...` per device,
 * followed at once by the reason a device could not be checked; then, when
 * any device was checked, an empty line, `Leak Analysis Results for the
 * Custom Range:` and each checked device's leaks (or none). Past
 * `maxLeaks`, one line of ours says how many more were left out.
 *
 * @example
 * ```ts
 * import { checkLeaksFile, formatCheckLeaks } from "./mod.ts";
 * const r = await checkLeaksFile("memscope_dump.csv", { mstxInfo: "step" });
 * console.log(formatCheckLeaks(r).join("\n"));
 * ```
 */
export function formatCheckLeaks(result: CheckLeaksResult): string[] {
  const pool = result.eventType === "HAL" ? "Hal" : result.eventType;
  const lines: string[] = [];
  const results: string[] = [];
  for (const { device: written, ...d } of result.devices) {
    const device = shownText(written);
    lines.push(`INFO: Starting to analyze data for device ${device}...`);
    switch (d.status) {
      case "too-few-marks":
        lines.push(
          `ERROR: Device ${device} has fewer than 3 data points. Please re-collect the data points.`,
        );
        break;
      case "start-out-of-bounds":
        lines.push(
          `INFO: Start index ${result.startIndexText} is out of bounds. Device ${device} has a total of ${d.marks} MSTX events.`,
        );
        break;
      case "clean":
        results.push(
          `No ${pool.toLowerCase()} memory leaks detected on device ${device}.`,
        );
        break;
      case "leaks":
        results.push(
          `====== ERROR: Detected memory leaks on device ${device} ======`,
        );
        leakLines(pool, d.leaks, results);
        if (d.unlisted) {
          results.push(
            `... and ${d.unlisted} more leak(s) on device ${device} not listed (raise --max-leaks to see them).`,
          );
        }
        break;
    }
  }
  // Joined, not spread into a call: past about 125,000 lines that took more
  // stack than a call may (a RangeError at --max-leaks 1000000000).
  return results.length
    ? lines.concat("", "Leak Analysis Results for the Custom Range:", results)
    : lines;
}

/**
 * A line per leak onto `lines`, in a loop of its own: it runs once, cold,
 * over up to 10,000 leaks, where the device loop's `for...of` and `switch`
 * round it made it slower.
 */
function leakLines(pool: string, leaks: Leak[], lines: string[]): void {
  for (let i = 0; i < leaks.length; i++) {
    const l = leaks[i];
    lines.push(
      `Direct ${pool} memory leak of ${pythonFloat(l.mb)} Mb(s) at ${
        shownText(l.ptr)
      } in Index ${shownText(l.index)}.`,
    );
  }
}
