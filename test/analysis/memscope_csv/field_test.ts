import assert from "node:assert/strict";
import {
  csvField,
  eventLogText,
  formatPtr,
  MEMSCOPE_HEADER,
  readMemscopeBytes,
} from "../../../analysis/memscope_csv/mod.ts";

Deno.test("csvField quotes a comma, a quote or a line break (RFC 4180) and nothing else", () => {
  assert.equal(csvField("plain"), "plain");
  assert.equal(csvField('say "hi", then go'), '"say ""hi"", then go"');
  assert.equal(csvField("two\nlines"), '"two\nlines"');
  assert.equal(csvField("a\rb"), '"a\rb"');
  assert.equal(csvField(" padded"), " padded");
  assert.equal(csvField(12n), "12");
  assert.equal(csvField(undefined), "");
  assert.equal(formatPtr(0x12c041400000), "0x000012c041400000");
  // What we write, we read back.
  const name = 'x, "y"\nz';
  const row = [1, "MSTX", "Mark", name, 5, 1, 1, 0, "N/A", ""].map(csvField);
  const names: string[] = [];
  readMemscopeBytes(
    new TextEncoder().encode(
      `${MEMSCOPE_HEADER.join(",")}\n${row.join(",")}\n`,
    ),
    (r) => void names.push(r.name),
  );
  assert.deepEqual(names, [name]);
});

Deno.test("eventLogText also quotes outer blanks and guards a formula with a quote mark", () => {
  assert.equal(eventLogText("step"), "step");
  assert.equal(eventLogText(" step"), '" step"');
  assert.equal(eventLogText("=1+1"), "'=1+1");
  assert.equal(eventLogText("-a,b"), `"'-a,b"`);
});
