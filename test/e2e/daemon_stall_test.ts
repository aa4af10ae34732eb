/**
 * A daemon that stops reading for a while (SIGSTOP, a debugger, a stalled
 * VM) costs the job no more than the 2 s wait, and tracing resumes once it
 * reads again: what the job emitted meanwhile is counted, said once, and
 * listed, and everything emitted after is in the event log.
 */
import assert from "node:assert/strict";
import { pidAlive } from "../../ffi/bindings.ts";
import type { EventGap, ProcessInfo } from "../../watch/types.ts";
import {
  eventually,
  requestSocket,
  Spawned,
  startDaemonProcess,
  STOMPWATCH,
  tempDir,
  workload,
} from "./_harness.ts";

/** Rows of every event log under `out`. */
function logRows(out: string): string[] {
  const rows: string[] = [];
  for (const d of Deno.readDirSync(out)) {
    if (!d.isDirectory || !d.name.startsWith("device_")) continue;
    for (const f of Deno.readDirSync(`${out}/${d.name}`)) {
      if (!/^memscope_dump_\d{14}\.csv$/.test(f.name)) continue;
      const lines = Deno.readTextFileSync(`${out}/${d.name}/${f.name}`)
        .trimEnd().split("\n");
      rows.push(...lines.slice(1));
    }
  }
  return rows;
}

Deno.test("a job whose daemon was stopped for more than 2 s is traced again once it resumes, and what it lost meanwhile is counted exactly and said once", async () => {
  const out = tempDir();
  const daemon = await startDaemonProcess(out);
  const socket = `${out}/stompwatch.sock`;
  const health = await requestSocket(socket, "GET", "/health");
  const daemonPid = (health.body as { pid: number }).pid;
  const gates = tempDir();
  const job = new Spawned(STOMPWATCH, [
    "run",
    "--daemon",
    socket,
    "--",
    workload("stall"),
    "40000",
    `${gates}/phase1`,
    `${gates}/phase2`,
  ], { STOMPWATCH_RING_BYTES: String(1 << 20) }); // 16384 events fill it
  let stopped = false;
  try {
    await job.line(/^ready$/);
    const pid = await eventually(async () => {
      const r = await requestSocket(socket, "GET", "/processes");
      const procs = (r.body as { processes: ProcessInfo[] }).processes;
      return procs.find((p) => p.command.includes(gates))?.pid;
    });
    Deno.kill(daemonPid, "SIGSTOP");
    stopped = true;
    Deno.writeTextFileSync(`${gates}/phase1`, "");
    // The ring fills, the hook waits 2 s for the daemon, then passes through.
    await job.line(/^phase1 40000$/);
    Deno.kill(daemonPid, "SIGCONT");
    stopped = false;
    Deno.writeTextFileSync(`${gates}/phase2`, "");
    const emitted = Number((await job.line(/^emitted (\d+)$/))[1]);
    assert.equal((await job.done).code, 0, job.stderr);

    const p = await eventually(async () => {
      const r = await requestSocket(socket, "GET", "/processes");
      const procs = (r.body as { processes: ProcessInfo[] }).processes;
      return procs.find((q) => q.pid === pid && q.finished);
    });
    const rows = logRows(out);
    assert.match(rows.at(-1)!, /SYSTEM,PROC_EXIT/, "the exit is logged");
    assert.ok(rows.some((r) => r.includes("phase 2 done")), "phase 2 logged");
    assert.ok(p.droppedEvents > 0, JSON.stringify(p));
    // Every event: PROC_START, what the job emitted, PROC_EXIT.
    assert.equal(rows.length + p.droppedEvents, emitted + 2);

    const gaps = (await requestSocket(socket, "GET", "/health")).body as {
      eventGaps: EventGap[];
    };
    const ours = gaps.eventGaps.filter((g) => g.pid === pid);
    assert.equal(ours.length, 1, JSON.stringify(gaps.eventGaps));
    assert.equal(ours[0].lostEvents, p.droppedEvents);
    assert.ok(ours[0].silentMs! >= 2000, JSON.stringify(ours[0]));
  } finally {
    if (stopped) Deno.kill(daemonPid, "SIGCONT");
    Deno.writeTextFileSync(`${gates}/phase1`, "");
    Deno.writeTextFileSync(`${gates}/phase2`, "");
    await job.done;
    daemon.child.kill("SIGTERM");
    await daemon.done;
  }
  const said = daemon.stderr.split("\n").filter((l) =>
    /pid \d+: the daemon did not read for \d+\.\d s; the job lost \d+ events/
      .test(l)
  );
  assert.equal(said.length, 1, daemon.stderr);
});

Deno.test("a job that ends while its daemon is stopped has what it lost counted exactly and said once when the daemon resumes", async () => {
  const out = tempDir();
  const daemon = await startDaemonProcess(out);
  const socket = `${out}/stompwatch.sock`;
  const health = await requestSocket(socket, "GET", "/health");
  const daemonPid = (health.body as { pid: number }).pid;
  const gates = tempDir();
  Deno.writeTextFileSync(`${gates}/phase2`, ""); // no wait between phases
  const job = new Spawned(STOMPWATCH, [
    "run",
    "--daemon",
    socket,
    "--",
    workload("stall"),
    "40000",
    `${gates}/phase1`,
    `${gates}/phase2`,
    "0",
  ], { STOMPWATCH_RING_BYTES: String(1 << 20) });
  let stopped = false;
  try {
    await job.line(/^ready$/);
    const pid = await eventually(async () => {
      const r = await requestSocket(socket, "GET", "/processes");
      const procs = (r.body as { processes: ProcessInfo[] }).processes;
      return procs.find((p) => p.command.includes(gates))?.pid;
    });
    Deno.kill(daemonPid, "SIGSTOP");
    stopped = true;
    Deno.writeTextFileSync(`${gates}/phase1`, "");
    const emitted = Number((await job.line(/^emitted (\d+)$/))[1]);
    // Gone, its exit lost too (./stompwatch run itself waits for the daemon).
    await eventually(() => pidAlive(pid) ? undefined : true);
    Deno.kill(daemonPid, "SIGCONT");
    stopped = false;

    const p = await eventually(async () => {
      const r = await requestSocket(socket, "GET", "/processes");
      const procs = (r.body as { processes: ProcessInfo[] }).processes;
      return procs.find((q) => q.pid === pid && q.finished);
    });
    const rows = logRows(out);
    assert.equal(rows.length + p.droppedEvents, emitted + 2);
    const gaps = (await requestSocket(socket, "GET", "/health")).body as {
      eventGaps: EventGap[];
    };
    const ours = gaps.eventGaps.filter((g) => g.pid === pid);
    assert.equal(ours.length, 1, JSON.stringify(gaps.eventGaps));
    assert.equal(ours[0].lostEvents, p.droppedEvents);
    assert.equal(ours[0].silentMs, null);
  } finally {
    if (stopped) Deno.kill(daemonPid, "SIGCONT");
    Deno.writeTextFileSync(`${gates}/phase1`, "");
    await job.done;
    daemon.child.kill("SIGTERM");
    await daemon.done;
  }
  const said = daemon.stderr.split("\n").filter((l) =>
    /pid \d+: the daemon did not read before the job ended; the job lost \d+ events/
      .test(l)
  );
  assert.equal(said.length, 1, daemon.stderr);
});
