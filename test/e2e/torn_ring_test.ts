/**
 * A job that dies between reserving a ring record and finishing it leaves
 * a record the pump can never read past. Requests stop waiting for it, and
 * the daemon still finishes the process: its ring is freed and the lost
 * tail counts as dropped.
 */
import assert from "node:assert/strict";
import type { DaemonPaths } from "../../daemon/config.ts";
import { attachRing, detachRing, listNames, RING } from "../../ffi/bindings.ts";
import type { ProcessInfo } from "../../watch/types.ts";
import {
  eventually,
  requestSocket,
  Spawned,
  startDaemonProcess,
  STOMPWATCH,
  tempDir,
  workload,
} from "./_harness.ts";

/** Reserves 64 bytes in the ring as a producer would, and never stamps them. */
function reserveAndAbandon(ringPath: string): void {
  const ring = attachRing(ringPath);
  assert.ok(ring, ringPath);
  const head = new BigUint64Array(ring.buffer, RING.H.head, 1);
  Atomics.add(head, 0, 64n);
  detachRing(ring);
}

async function processOf(socket: string, pid: number): Promise<ProcessInfo> {
  const r = await requestSocket(socket, "GET", "/processes");
  return (r.body as { processes: ProcessInfo[] }).processes.find((p) =>
    p.pid === pid
  )!;
}

Deno.test("a job killed between reserving a record and finishing it is finished, its ring freed and its lost tail dropped, and marks do not wait for it", async () => {
  const out = tempDir();
  const daemon = await startDaemonProcess(out);
  const socket = `${out}/stompwatch.sock`;
  const gate = `${tempDir()}/go`;
  const job = new Spawned(STOMPWATCH, [
    "run",
    "--daemon",
    socket,
    "--",
    workload("blocks"),
    "--wait-file",
    gate,
  ]);
  try {
    await job.line(/^ready$/);
    const pid = await eventually(async () => {
      const r = await requestSocket(socket, "GET", "/processes");
      const procs = (r.body as { processes: ProcessInfo[] }).processes;
      return procs.find((p) => p.command.includes(gate))?.pid;
    });
    const { ringDir } = JSON.parse(
      Deno.readTextFileSync(`${out}/daemon.json`),
    ) as DaemonPaths;
    reserveAndAbandon(`${ringDir}/${pid}.ring`);

    // Alive, with a record it may still finish: the wait has an end.
    const stuck = await requestSocket(socket, "POST", "/marks", {
      message: "while stuck",
      pid,
    });
    assert.equal(stuck.status, 503);
    assert.match(
      (stuck.body as { error: string }).error,
      new RegExp(`^Cannot catch up with pid ${pid}: .*still unfinished`),
    );

    Deno.kill(pid, "SIGKILL");
    await job.done;
    const finished = await eventually(async () => {
      const p = await processOf(socket, pid);
      return p.finished ? p : undefined;
    });
    assert.equal(finished.exited, true);
    assert.ok(finished.droppedEvents >= 1, JSON.stringify(finished));
    assert.deepEqual(
      listNames(ringDir, `${pid}.`),
      [],
      "its ring is removed from /dev/shm",
    );
    const marked = await requestSocket(socket, "POST", "/marks", {
      message: "after",
    });
    assert.equal(marked.status, 200);
    assert.deepEqual((marked.body as { marked: number[] }).marked, []);
  } finally {
    Deno.writeTextFileSync(gate, "");
    daemon.child.kill("SIGTERM");
    await daemon.done;
  }
  const said = daemon.stderr.split("\n").filter((l) =>
    l.includes("died while writing an event")
  );
  assert.equal(said.length, 1, daemon.stderr);
});
