/**
 * A daemon killed while a busy job floods it leaves event logs that end on
 * a row boundary: its guardian cuts the part of a row that a write cut
 * short left. SIGKILL lands inside a write only now and then; a file size
 * limit (`ulimit -f`) cuts a write short and then kills the daemon with
 * SIGXFSZ every time, so that test holds the rule on every run.
 */
import assert from "node:assert/strict";
import { EVENT_LOG_HEADER } from "../../analysis/memscope_csv/mod.ts";
import { HOOK_LIBRARY } from "../../ffi/bindings.ts";
import {
  eventually,
  Spawned,
  startDaemonProcess,
  STOMPWATCH,
  tempDir,
  workload,
} from "./_harness.ts";

function logPath(dir: string): string | undefined {
  try {
    const e = [...Deno.readDirSync(dir)].find((e) =>
      /^memscope_dump_\d{14}\.csv$/.test(e.name)
    );
    return e && `${dir}/${e.name}`;
  } catch {
    return undefined;
  }
}

function assertWholeRows(path: string): void {
  const text = Deno.readTextFileSync(path);
  assert.ok(text.startsWith(EVENT_LOG_HEADER + "\n"));
  assert.ok(
    text.endsWith("\n"),
    `ends mid-row: ${JSON.stringify(text.slice(-80))}`,
  );
  const lines = text.slice(-4096).split("\n").slice(1, -1);
  const last = lines.at(-1)!;
  assert.match(last, /^\d+,(MALLOC|FREE),/, last);
  assert.equal((last.match(/"/g)?.length ?? 0) % 2, 0, last);
  const [prev] = lines.at(-2)!.split(",");
  assert.equal(Number(last.split(",")[0]), Number(prev) + 1);
}

function floodJob(out: string): Spawned {
  return new Spawned(STOMPWATCH, [
    "run",
    "--daemon",
    `${out}/stompwatch.sock`,
    "--",
    workload("bench_ring"),
    "20000000",
  ]);
}

async function killMidJob(): Promise<string> {
  const out = tempDir();
  const d = await startDaemonProcess(out);
  const job = floodJob(out);
  // Busy: several megabytes of rows written, more on the way.
  const path = await eventually(() => {
    const p = logPath(`${out}/device_0`);
    return p && Deno.statSync(p).size > (8 << 20) ? p : undefined;
  }, 60_000);
  d.child.kill("SIGKILL");
  // The daemon's stderr closes once the guardian, which shares it, is done.
  await d.done;
  job.child.kill("SIGTERM");
  await job.done;
  return path;
}

for (const attempt of [1, 2, 3]) {
  Deno.test(`a daemon SIGKILLed during a busy job leaves a log of whole rows (try ${attempt})`, async () => {
    assertWholeRows(await killMidJob());
  });
}

Deno.test("a daemon that dies right after a write was cut short leaves a log of whole rows", async () => {
  const out = tempDir();
  // 4097 KiB: the write that crosses it stops there, mid-row, and the next
  // one kills the daemon with SIGXFSZ.
  // Started from a shell that attached itself (`eval "$(stompwatch env)"`):
  // the guardian must start all the same.
  const d = new Spawned("bash", [
    "-c",
    `ulimit -f 4097; exec "$0" daemon --output "$1"`,
    STOMPWATCH,
    out,
  ], { LD_PRELOAD: HOOK_LIBRARY });
  await d.line(/listening on/);
  const job = floodJob(out);
  const status = await d.done;
  assert.equal(status.signal, "SIGXFSZ", d.stderr);
  job.child.kill("SIGTERM");
  await job.done;
  const path = logPath(`${out}/device_0`)!;
  assertWholeRows(path);
  assert.match(d.stderr, /cut back to its last whole row/);
});

Deno.test("a daemon started where a killed daemon and its guardian left a half row cuts it back", async () => {
  const out = tempDir();
  const path = `${out}/device_0/memscope_dump_20200101000000.csv`;
  Deno.mkdirSync(`${out}/device_0`);
  const whole =
    `${EVENT_LOG_HEADER}\n1,SYSTEM,PROC_START,"a\nb",5,1,1,N/A,N/A,,,\n`;
  Deno.writeTextFileSync(path, whole + "2,MALLOC,HAL,N/A,6,1,1,0,0x0000");
  const d = await startDaemonProcess(out);
  d.child.kill("SIGTERM");
  await d.done;
  assert.equal(Deno.readTextFileSync(path), whole);
  assert.match(
    d.stderr,
    /memscope_dump_20200101000000\.csv ended in part of a row/,
  );
});
