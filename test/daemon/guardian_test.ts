import assert from "node:assert/strict";
import { trimToRowBoundary } from "../../daemon/guardian.ts";

function file(text: string): string {
  const path = Deno.makeTempFileSync();
  Deno.writeTextFileSync(path, text);
  return path;
}

Deno.test("trimToRowBoundary cuts a half row and keeps a line break inside quotes", () => {
  const path = file('h\n1,"a\nb"\n2,"c,');
  assert.equal(trimToRowBoundary(path, 2), 5);
  assert.equal(Deno.readTextFileSync(path), 'h\n1,"a\nb"\n');
});

Deno.test("trimToRowBoundary leaves a file of whole rows alone, and scans from the start when the file is shorter than the size it was told", () => {
  const whole = file("h\n1,a\n");
  assert.equal(trimToRowBoundary(whole, 2), 0);
  assert.equal(Deno.readTextFileSync(whole), "h\n1,a\n");
  const remade = file("h\n1,");
  assert.equal(trimToRowBoundary(remade, 4096), 2);
  assert.equal(Deno.readTextFileSync(remade), "h\n");
});
