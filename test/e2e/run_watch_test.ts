/**
 * `./stompwatch run` with a --watch spec over the stomp workload: the Copy
 * overflow into a neighbour must be named as a stomp, the checksums must
 * show which ops left each block alone, and full-content dumps must hold the
 * exact bytes the workload wrote.
 */
import assert from "node:assert/strict";
import {
  checksumRows,
  floats,
  stompwatch,
  tempDir,
  workload,
} from "./_harness.ts";
import type { WatchReport } from "../../watch/report.ts";

function report(out: string): WatchReport {
  return JSON.parse(
    Deno.readTextFileSync(`${out}/watch_dump/watch_report.json`),
  );
}

/** Runs the stomp workload under `run` with `args`; it must exit 0. */
async function runStomp(args: string[]) {
  const out = tempDir();
  const r = await stompwatch([
    "run",
    "--output",
    out,
    ...args,
    "--",
    workload("stomp"),
  ]);
  assert.deepEqual(r.code, 0, r.stderr);
  return { out, r };
}

Deno.test("run names the Copy that overflowed into a watched neighbour as a stomp", async () => {
  const { out, r } = await runStomp(["--watch=Fill:0,Add"]);
  const windows = report(out).watches;
  assert.deepEqual(windows.map((w) => w.name), ["Fill", "Fill.2"]);
  const [a, b] = windows;
  assert.deepEqual(
    a.stomp,
    false,
    "A is written only by ops that have it as an output",
  );
  assert.deepEqual(a.first_change?.op, "Fill");
  assert.deepEqual(b.stomp, true);
  assert.deepEqual(b.first_change?.op, "Copy");
  assert.deepEqual(b.first_change?.call_count, 1);
  assert.ok(r.stderr.includes("STOMPED by Copy #1"), r.stderr);
});

Deno.test("run's checksum CSV shows before equal to after for every op that leaves the block alone", async () => {
  const { out } = await runStomp(["--watch=Fill:0,Add"]);
  const rows = checksumRows(`${out}/watch_dump`);
  const sum = (op: string, watch: string, phase: string) => {
    const row = rows.find(([info]) =>
      new RegExp(`^0_\\d+_${op}-${watch}_0_${phase}$`).test(info)
    );
    assert.ok(
      row,
      `no row for ${op} ${watch} ${phase} in ${
        rows.map((r) => r[0]).join(" ")
      }`,
    );
    return row[1];
  };
  // A's window: Fill #2 and Mul #1 write B only.
  assert.deepEqual(
    sum("Fill_2", "Fill", "before"),
    sum("Fill_2", "Fill", "after"),
  );
  assert.deepEqual(
    sum("Mul_1", "Fill", "before"),
    sum("Mul_1", "Fill", "after"),
  );
  // B's window: Add #1 reads B and writes A.
  assert.deepEqual(
    sum("Add_1", "Fill.2", "before"),
    sum("Add_1", "Fill.2", "after"),
  );
  // ...and the stomp and the legitimate write do change it.
  assert.ok(
    sum("Copy_1", "Fill.2", "before") !== sum("Copy_1", "Fill.2", "after"),
  );
  assert.ok(
    sum("Mul_1", "Fill.2", "before") !== sum("Mul_1", "Fill.2", "after"),
  );
  for (const [, checksum] of rows) {
    assert.ok(/^[0-9a-f]{16}$/.test(checksum), checksum);
  }
});

Deno.test("run with full-content writes .bin files holding the exact bytes of the block", async () => {
  const { out } = await runStomp(["--watch=Fill:0,Add,full-content"]);
  const dir = `${out}/watch_dump`;
  const names = [...Deno.readDirSync(dir)].map((e) => e.name);
  const bin = (op: string, phase: string) => {
    const name = names.find((n) =>
      new RegExp(`^0_\\d+_${op}-Fill\\.2_0_${phase}\\.bin$`).test(n)
    );
    assert.ok(name, `no ${op} ${phase} dump in ${names.join(" ")}`);
    assert.deepEqual(Deno.statSync(`${dir}/${name}`).mode! & 0o777, 0o600);
    return Deno.readFileSync(`${dir}/${name}`);
  };
  assert.deepEqual(bin("Fill_2", "after"), floats(64, 2));
  assert.deepEqual(bin("Mul_1", "after"), floats(64, 4));
  assert.deepEqual(bin("Copy_1", "before"), floats(64, 4));
  assert.deepEqual(bin("Copy_1", "after"), floats(64, 3));
  assert.deepEqual(names.filter((n) => n.endsWith(".part")), []);
  assert.deepEqual(report(out).watches[1].stomp, true);
});

Deno.test("run with the msMemScope CRC-64 writes the real tool's checksums", async () => {
  const { out } = await runStomp([
    "--checksum",
    "crc64-msmemscope",
    "--watch=Fill:0,Add",
  ]);
  const row = checksumRows(`${out}/watch_dump`).find(([info]) =>
    /_Mul_1-Fill\.2_0_after$/.test(info)
  );
  assert.ok(row);
  // 64 floats of 4.0, through the byte-at-a-time model of the CRC.
  const { crc64MsMemScope } = await import("../ffi/crc64_reference.ts");
  assert.deepEqual(
    row[1],
    crc64MsMemScope(floats(64, 4)).toString(16).padStart(16, "0"),
  );
});

Deno.test("run rejects a malformed --watch before the job starts", async () => {
  const out = tempDir();
  const marker = `${out}/started`;
  const r = await stompwatch([
    "run",
    "--output",
    out,
    "--watch=Fill:01,Add",
    "--",
    "touch",
    marker,
  ]);
  assert.deepEqual(r.code, 2);
  assert.ok(
    r.stderr.includes("--watch=[start[:outid]],end[,full-content]"),
    r.stderr,
  );
  let started = true;
  try {
    Deno.statSync(marker);
  } catch {
    started = false;
  }
  assert.deepEqual(started, false);
});

Deno.test("run enforces ASCEND_LAUNCH_BLOCKING=1 and says so when it overrides the user", async () => {
  const out = tempDir();
  const r = await stompwatch(
    [
      "run",
      "--output",
      out,
      "--",
      "sh",
      "-c",
      'test "$ASCEND_LAUNCH_BLOCKING" = 1',
    ],
    { ASCEND_LAUNCH_BLOCKING: "0" },
  );
  assert.deepEqual(r.code, 0, r.stderr);
  assert.ok(
    r.stderr.includes("ASCEND_LAUNCH_BLOCKING=0 overridden with 1"),
    r.stderr,
  );
});

Deno.test("run exits with the job's exit code", async () => {
  const r = await stompwatch([
    "run",
    "--output",
    tempDir(),
    "--",
    "sh",
    "-c",
    "exit 7",
  ]);
  assert.deepEqual(r.code, 7);
});
