/**
 * Rows asked for past the end of a log (check-leaks reads each listed
 * leak's row back by its offset, and the log may have been cut since):
 * nothing is copied, and no memory of the process but the log's mapping is
 * touched. The letting go of read pages (ffi/reading/mapped_log.c) once
 * ran past the mapping and cleared whatever lay after it: the process's own
 * buffers read back as zeros, then it crashed. Run in a child process, so
 * that a crash fails the test rather than ending the runner.
 */
import assert from "node:assert/strict";

const BINDINGS = new URL("../../ffi/bindings.ts", import.meta.url).href;
const OPEN = new URL("../../analysis/memscope_csv/open.ts", import.meta.url)
  .href;

/** The child: buffers of 0xAA beside the mappings, then offsets past the end. */
const CHILD = `
import { rowsAt } from "${BINDINGS}";
import { eventLogFd, openEventLog } from "${OPEN}";
const path = Deno.args[0];
Deno.writeTextFileSync(path, ("a".repeat(99) + "\\n").repeat(1000));
using log = await openEventLog(path);
const fd = eventLogFd(log.file);
const keep = Array.from({ length: 64 }, () => new Uint8Array(2 << 20).fill(0xaa));
for (let k = 0; k < 20; k++) {
  const r = await rowsAt(fd, Float64Array.of(0, 3e6 + k * 1e6));
  if (!("batches" in r) || r.batches.length !== 1) throw new Error("rows: " + JSON.stringify(r));
}
let zeroed = 0;
for (const b of keep) for (let i = 0; i < b.length; i += 4096) zeroed += b[i] === 0xaa ? 0 : 1;
console.log(JSON.stringify({ zeroed }));
`;

Deno.test("rows asked for past the end of a log copy nothing and leave the process's memory alone", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_rows_past_end_" });
  try {
    const script = `${dir}/child.ts`;
    Deno.writeTextFileSync(script, CHILD);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", script, `${dir}/log.csv`],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout).trim();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.deepEqual(JSON.parse(text), { zeroed: 0 });
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
