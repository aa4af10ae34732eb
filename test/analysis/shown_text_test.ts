import assert from "node:assert/strict";
import { shownText } from "../../analysis/shown_text.ts";

Deno.test("shownText leaves safe text as written, the same string", () => {
  for (
    const text of ["", "0x000012409c000000", "988547", "npu:0 设备", "a/b:c"]
  ) {
    assert.equal(shownText(text), text);
  }
});

Deno.test("shownText escapes every control character, backslash and bidirectional mark, wherever they are", () => {
  assert.equal(shownText("0\x1b[2J"), "0\\x1b[2J");
  assert.equal(shownText("a\nb\rc\x00"), "a\\x0ab\\x0dc\\x00");
  assert.equal(shownText("\x7f\x9f"), "\\x7f\\x9f");
  assert.equal(shownText("C:\\dir"), "C:\\\\dir");
  assert.equal(shownText("x\u202ey\u2066z\u200f"), "x\\u202ey\\u2066z\\u200f");
  assert.equal(shownText("\u2028\u2029"), "\\u2028\\u2029");
  // Twice in a row: a global search's position from the call before must
  // not carry over.
  assert.equal(shownText("\x01"), "\\x01");
  assert.equal(shownText("\x01"), "\\x01");
});
