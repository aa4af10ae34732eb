/**
 * The snapshot stream of `GET /snapshot`: the same bytes as the file the
 * CLI writes, handed out while the conversion is still going.
 */
import assert from "node:assert/strict";
import {
  JsonWriter,
  MemoryRows,
  PickleWriter,
  readMemoryRows,
  snapshotStream,
  writeRowsSnapshot,
} from "../../../analysis/snapshot/mod.ts";
import { writeMemscopeLog } from "../../../bench/_memscope_gen.ts";

const log = await (async () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_stream_" });
  const path = `${dir}/memscope_dump_20260101000000.csv`;
  await writeMemscopeLog(path, 60_000);
  globalThis.addEventListener("unload", () => {
    Deno.removeSync(dir, { recursive: true });
  });
  return path;
})();

function whole(
  rows: MemoryRows,
  format: "pickle" | "json",
  maxEntries?: number,
): Uint8Array {
  const parts: Uint8Array[] = [];
  const sink = (b: Uint8Array) => void parts.push(b.slice());
  const w = format === "json" ? new JsonWriter(sink) : new PickleWriter(sink);
  writeRowsSnapshot(rows, w, { maxEntries });
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function drain(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

Deno.test("snapshotStream gives the bytes writeRowsSnapshot writes, pickle and JSON, with and without maxEntries", async () => {
  const rows = await readMemoryRows(log);
  for (const format of ["pickle", "json"] as const) {
    for (const maxEntries of [undefined, 1000]) {
      const { stream, summary } = snapshotStream(rows, format, { maxEntries });
      const got = await drain(stream);
      assert.deepEqual(got, whole(rows, format, maxEntries));
      const s = await summary;
      assert.equal(s.dropped > 0, maxEntries !== undefined);
    }
  }
});

Deno.test("snapshotStream hands out its first part before the conversion has finished", async () => {
  const rows = await readMemoryRows(log);
  const { stream, summary } = snapshotStream(rows, "pickle");
  const reader = stream.getReader();
  const first = await reader.read();
  assert.ok(first.value && first.value.length > 0);
  const pending = Symbol("pending");
  const state = await Promise.race([
    summary.then(() => "done"),
    new Promise((r) => setTimeout(() => r(pending), 0)),
  ]);
  assert.equal(
    state,
    pending,
    "the whole file was written before the first part was read",
  );
  let n = first.value.length, parts = 1;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    parts++;
  }
  assert.ok(parts > 2, `${parts} parts`);
  assert.equal(n, whole(rows, "pickle").length);
  assert.ok((await summary).entries > 0);
});

Deno.test("snapshotStream refuses a device the log does not name before writing a byte", async () => {
  const rows = await readMemoryRows(log);
  assert.throws(
    () => snapshotStream(rows, "pickle", { device: 7 }),
    (e) => e instanceof RangeError && /^No device 7 in the log/.test(e.message),
  );
});
