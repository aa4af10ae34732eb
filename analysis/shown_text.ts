/**
 * Text that did not come from stompwatch, made safe to print: what a log or
 * a person wrote reaches a terminal only as escapes where it could drive
 * the terminal.
 *
 * @module
 */

// Control characters are what these find.
// deno-lint-ignore no-control-regex
const UNSAFE = /[\x00-\x1f\x7f-\x9f\\\u200e\u200f\u2028-\u202e\u2066-\u2069]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, "g");

/**
 * Text from a log or a command line as a terminal may show it: control
 * characters (C0, DEL, C1, the line and paragraph separators) and the
 * bidirectional marks as
 * `\xNN` or `\uNNNN`, and a backslash as `\\`, so that a Device Id or Ptr
 * in a crafted log can neither drive the terminal (move the cursor,
 * recolour it, end a line) nor pass for other text. Any other text is as
 * written.
 *
 * @example
 * ```ts
 * import { shownText } from "./shown_text.ts";
 * shownText("0\x1b[2J"); // "0\\x1b[2J"
 * ```
 */
export function shownText(text: string): string {
  // Nearly every text is safe as written: a test finds that for much less
  // than a replace that changes nothing (check-leaks' 10,000 leak lines
  // formatted 6-7 ms faster, in a command's first, cold run).
  if (!UNSAFE.test(text)) return text;
  return text.replace(UNSAFE_ALL, (c) => {
    const code = c.charCodeAt(0);
    return c === "\\"
      ? "\\\\"
      : code > 0xff
      ? `\\u${code.toString(16)}`
      : `\\x${code.toString(16).padStart(2, "0")}`;
  });
}
