/**
 * Parses the `--watch=[start[:outid]],end[,full-content]` value of
 * `stompwatch run` exactly as msMemScope accepts it (SPEC section 1), so a
 * malformed value is refused before the job starts. The grammar itself is
 * the hook's (ffi/common/watch_spec.c, called through FFI): what `run`
 * accepts is what the job watches; this file says what was wrong in words.
 *
 * @module
 */

import { parseWatchSpecNative, SPEC } from "../ffi/bindings.ts";
import { MAX_OP_NAME_BYTES } from "../watch/limits.ts";

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

/**
 * Parses a `--watch` value with the hook's grammar. Fields are separated by
 * `,` or the full-width `，`; `start:outid` is split at the last colon, so op
 * names may contain colons when an outid follows (`aten::add:0`).
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
  const parsed = parseWatchSpecNative(value);
  if (parsed.error !== SPEC.OK) {
    throw new Error(
      `Invalid --watch value ${JSON.stringify(value)}: ${
        reason(parsed.error, parsed.fields, parsed.detail)
      }; accepted form: ${WATCH_SPEC_FORM}`,
    );
  }
  const spec: WatchSpec = {
    outid: parsed.outid,
    end: parsed.end,
    fullContent: parsed.fullContent,
  };
  if (parsed.start !== "") spec.start = parsed.start;
  return spec;
}

/** What is wrong, in words, for each error of the native grammar. */
function reason(error: number, fields: number, detail: string): string {
  const quoted = JSON.stringify(detail);
  switch (error) {
    case SPEC.NO_COMMA:
      return "a comma before end is required (write ,END to watch without start)";
    case SPEC.TOO_MANY_FIELDS:
      return `${fields} fields given, at most 3`;
    case SPEC.END_MISSING:
      return "end op is required";
    case SPEC.THIRD_FIELD:
      return `third field must be exactly full-content, got ${quoted}`;
    case SPEC.OUTID_MISSING:
      return "outid is missing after the colon";
    case SPEC.OUTID_NOT_NUMBER:
      return `outid must be a non-negative integer, got ${quoted} ` +
        "(a start op whose name contains a colon needs an explicit outid, e.g. aten::add:0)";
    case SPEC.OUTID_LEADING_ZERO:
      return `outid must not have leading zeros, got ${detail}`;
    case SPEC.OUTID_TOO_LARGE:
      return `outid ${detail} is larger than ${SPEC.MAX_OUTID}`;
    case SPEC.START_MISSING:
      return "start op is missing before :outid";
    case SPEC.START_WHITESPACE:
    case SPEC.END_WHITESPACE:
      return `${role(error)} op ${quoted} starts or ends with whitespace`;
    case SPEC.START_CONTROL:
    case SPEC.END_CONTROL:
      return `${role(error)} op contains a control character`;
    case SPEC.START_TOO_LONG:
    case SPEC.END_TOO_LONG:
      return `${role(error)} op is longer than ${MAX_OP_NAME_BYTES} bytes`;
    default:
      return `not understood (native error ${error})`;
  }
}

function role(error: number): "start" | "end" {
  return error >= SPEC.START_MISSING ? "start" : "end";
}
