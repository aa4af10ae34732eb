/**
 * `compare --output` somewhere stompwatch cannot write is one plain line,
 * not Deno's advice about permission flags a user cannot pass.
 */
import assert from "node:assert/strict";
import { stompwatch } from "./_harness.ts";

const FIXTURES =
  new URL("../../../shared/fixtures/msmemscope/", import.meta.url).pathname;
const INPUT = `${FIXTURES}compare_baseline.csv,${FIXTURES}compare_leaks.csv`;

Deno.test("compare --output /proc says it cannot write there in one line", async () => {
  const r = await stompwatch([
    "compare",
    "--input",
    INPUT,
    "--output",
    "/proc",
  ]);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(
    r.stderr,
    "stompwatch: Cannot write the comparison under --output /proc: stompwatch may not write there; give a directory of your own\n",
  );
});
