/**
 * Parses the `--watch=[start[:outid]],end[,full-content]` value of
 * `stompwatch run` exactly as msMemScope accepts it (SPEC section 1), so a
 * malformed value is refused before the job starts.
 *
 * @module
 */

import { hasControlChar, MAX_OP_NAME_BYTES, utf8ByteLength } from "./limits.ts";

/** A parsed `--watch` value. */
export interface WatchSpec {
  /** Op whose call opens a window; absent for `,end`. */
  start?: string;
  /** Output number of `start` to watch; 0 when not written. */
  outid: number;
  /** Op after whose call the window closes. */
  end: string;
  /** Write whole blocks to `.bin` files instead of checksums. */
  fullContent: boolean;
}

/** The form every error message shows. */
export const WATCH_SPEC_FORM = "--watch=[start[:outid]],end[,full-content]";

/** Largest outid: the hook keeps it in a C `int`. */
const MAX_OUTID = 2147483647;

/**
 * Parses a `--watch` value. Fields are separated by `,` or the full-width
 * `，`; `start:outid` is split at the last colon, so op names may contain
 * colons when an outid follows (`aten::add:0`).
 *
 * @throws {Error} naming the problem and the accepted form.
 * @example
 * ```ts
 * import { parseWatchSpec } from "./watch_spec.ts";
 * parseWatchSpec("Fill:0,Mul,full-content");
 * // { start: "Fill", outid: 0, end: "Mul", fullContent: true }
 * ```
 */
export function parseWatchSpec(value: string): WatchSpec {
  const fail = (reason: string): never => {
    throw new Error(
      `Invalid --watch value ${
        JSON.stringify(value)
      }: ${reason}; accepted form: ${WATCH_SPEC_FORM}`,
    );
  };
  const fields = value.replaceAll("，", ",").split(",");
  if (fields.length === 1) {
    fail("a comma before end is required (write ,END to watch without start)");
  }
  if (fields.length > 3) fail(`${fields.length} fields given, at most 3`);
  const [startField, end, third] = fields;
  if (end === "") fail("end op is required");
  checkOpName(end, "end", fail);
  if (third !== undefined && third !== "full-content") {
    fail(
      `third field must be exactly full-content, got ${JSON.stringify(third)}`,
    );
  }
  const spec: WatchSpec = { outid: 0, end, fullContent: third !== undefined };
  if (startField === "") return spec;
  const colon = startField.lastIndexOf(":");
  const start = colon < 0 ? startField : startField.slice(0, colon);
  if (colon >= 0) spec.outid = parseOutid(startField.slice(colon + 1), fail);
  if (start === "") fail("start op is missing before :outid");
  checkOpName(start, "start", fail);
  spec.start = start;
  return spec;
}

function parseOutid(text: string, fail: (reason: string) => never): number {
  if (text === "") fail("outid is missing after the colon");
  if (!/^[0-9]+$/.test(text)) {
    fail(
      `outid must be a non-negative integer, got ${JSON.stringify(text)} ` +
        "(a start op whose name contains a colon needs an explicit outid, e.g. aten::add:0)",
    );
  }
  if (text.length > 1 && text.startsWith("0")) {
    fail(`outid must not have leading zeros, got ${text}`);
  }
  const outid = Number(text);
  if (outid > MAX_OUTID) fail(`outid ${text} is larger than ${MAX_OUTID}`);
  return outid;
}

function checkOpName(
  name: string,
  role: "start" | "end",
  fail: (reason: string) => never,
): void {
  if (name.trim() !== name) {
    fail(`${role} op ${JSON.stringify(name)} starts or ends with whitespace`);
  }
  if (hasControlChar(name)) fail(`${role} op contains a control character`);
  if (utf8ByteLength(name) > MAX_OP_NAME_BYTES) {
    fail(`${role} op is longer than ${MAX_OP_NAME_BYTES} bytes`);
  }
}
