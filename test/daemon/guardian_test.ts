import assert from "node:assert/strict";
import { startGuardian, trimToRowBoundary } from "../../daemon/guardian.ts";

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

Deno.test("the guardian cuts a half row in an output directory whose path has a comma", async () => {
  const out = `${Deno.makeTempDirSync()}/out,with a comma`;
  Deno.mkdirSync(out);
  const path = `${out}/memscope_dump_20200101000000.csv`;
  Deno.writeTextFileSync(path, "h\n1,a\n");
  const guardian = startGuardian(out);
  assert.ok(guardian);
  guardian.committed(path, 6);
  Deno.writeTextFileSync(path, "2,b", { append: true });
  // Its input ends as it would if the daemon died: it trims after it.
  await guardian.close();
  assert.equal(Deno.readTextFileSync(path), "h\n1,a\n");
});
