/**
 * Logs read through a mapping (ffi/mapped/mapped_log.c): a log cut shorter
 * while it is mapped makes the read say so, on whichever thread reads it,
 * where the bare mapping would end the process with SIGBUS; and a SIGBUS
 * that is not a guarded read's still ends it. Driven through the
 * `mapped_cut` workload, which builds the mapping code in.
 */
import assert from "node:assert/strict";
import { workload } from "../e2e/_harness.ts";

async function mappedCut(...args: string[]) {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_mapped_" });
  try {
    const out = await new Deno.Command(workload("mapped_cut"), {
      args: [dir, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { ...out, text: new TextDecoder().decode(out.stdout) };
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

Deno.test("a mapped log cut shorter while it is read makes the read say so, on this thread and another, and the process lives", async () => {
  const r = await mappedCut();
  assert.equal(r.code, 0, r.text + new TextDecoder().decode(r.stderr));
  assert.match(r.text, /^whole \d+\ncut\nthread cut\n$/);
});

Deno.test("a SIGBUS outside a guarded read still ends the process, as it would without the guard", async () => {
  const r = await mappedCut("outside");
  assert.equal(r.signal, "SIGBUS", r.text);
  assert.match(r.text, /thread cut\n$/);
});
