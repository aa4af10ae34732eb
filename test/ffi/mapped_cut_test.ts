/**
 * Logs read through a mapping (ffi/reading/mapped_log.c): a log cut shorter
 * while it is mapped makes the run reading it say so (within its last page
 * too), on whichever thread reads it, where the bare mapping would end the
 * process with SIGBUS; a page of zeros follows a page-sized log; and a
 * SIGBUS that is not a run's own (outside a run, on another mapping, on
 * another thread) still ends the process. Driven through the `mapped_cut`
 * workload, which builds the mapping code in.
 */
import assert from "node:assert/strict";
import { workload } from "../e2e/_harness.ts";

async function mappedCut(mode?: string) {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_mapped_" });
  try {
    const out = await new Deno.Command(workload("mapped_cut"), {
      args: mode ? [dir, mode] : [dir],
      stdout: "piped",
      stderr: "piped",
      // A fault taken for another thread's run could hang it.
      signal: AbortSignal.timeout(20_000),
    }).output();
    return { ...out, text: new TextDecoder().decode(out.stdout) };
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

Deno.test("a mapped log cut shorter while it is read makes the run say so, in its last page or past it, on this thread and another, and the process lives", async () => {
  const r = await mappedCut();
  assert.equal(r.code, 0, r.text + new TextDecoder().decode(r.stderr));
  assert.match(r.text, /^whole \d+\ncut in page\ncut\nthread cut\n$/);
});

for (const mode of ["outside", "other-mapping", "other-thread"]) {
  Deno.test(`a SIGBUS that is not a run's own (${mode}) still ends the process, as it would without the runs`, async () => {
    const r = await mappedCut(mode);
    assert.equal(r.signal, "SIGBUS", r.text);
    assert.equal(r.text, "");
  });
}
