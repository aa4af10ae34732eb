/**
 * CSV fields as the files stompwatch writes want them: one owner for the
 * quoting rules, so that the compare CSV, the checksum CSV and the event log
 * cannot drift apart.
 *
 * - {@linkcode csvField}: RFC 4180, quoted only when the field holds a
 *   comma, a quote or a line break (compare and checksum CSVs; Python's and
 *   msMemScope's readers take it as is).
 * - {@linkcode eventLogText}: free text in the event log (mark messages,
 *   op names, command lines): the same, plus quotes around outer blanks
 *   (which readers that trim would lose) and a `'` in front of `= + - @`
 *   so that no spreadsheet evaluates it.
 *
 * @module
 */

const SPECIAL = /[",\r\n]/;

/**
 * One CSV field per RFC 4180: quoted, with quotes doubled, when it holds a
 * comma, a quote or a line break; numbers and bigints as decimal; undefined
 * and null empty.
 *
 * @example
 * ```ts
 * import { csvField } from "./mod.ts";
 * csvField('say "hi", then go'); // "\"say \"\"hi\"\", then go\""
 * csvField(" padded "); // " padded "
 * ```
 */
export function csvField(
  value: string | number | bigint | undefined | null,
): string {
  if (value === undefined || value === null) return "";
  const s = String(value);
  return SPECIAL.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** Whether free text starts like a spreadsheet formula. */
function formulaLike(s: string): boolean {
  const c = s.charCodeAt(0);
  return c === 61 || c === 43 || c === 45 || c === 64; // = + - @
}

/**
 * Free text as one event-log field: {@linkcode csvField}'s rule, plus quotes
 * around outer blanks and a `'` in front of text that starts with
 * `= + - @`. (The byte writer's fast path, `putText`, skips this for text
 * that needs neither.)
 *
 * @example
 * ```ts
 * import { eventLogText } from "./mod.ts";
 * eventLogText("=1+1"); // "'=1+1"
 * eventLogText(" step"); // "\" step\""
 * ```
 */
export function eventLogText(s: string): string {
  const guarded = formulaLike(s) ? `'${s}` : s;
  if (SPECIAL.test(s) || s !== s.trim()) {
    return `"${guarded.replaceAll('"', '""')}"`;
  }
  return guarded;
}

/**
 * An address as msMemScope writes Ptr: `0x` and 16 lowercase hex digits.
 *
 * @example
 * ```ts
 * import { formatPtr } from "./mod.ts";
 * formatPtr(0x12c041400000); // "0x000012c041400000"
 * ```
 */
export function formatPtr(addr: number | bigint): string {
  return `0x${addr.toString(16).padStart(16, "0")}`;
}
