/**
 * `GET /snapshot` while a job runs: the live state of a traced process, as
 * a file Python's pickle and torch's _memory_viz.py read.
 */
import assert from "node:assert/strict";
import {
  eventually,
  requestSocket,
  Spawned,
  startDaemonProcess,
  STOMPWATCH,
  tempDir,
  workload,
} from "./_harness.ts";
import { checkSnapshots } from "../analysis/snapshot/_check.ts";
import type { ProcessInfo } from "../../watch/types.ts";

async function fetchBytes(socket: string, path: string) {
  const client = Deno.createHttpClient(
    { proxy: { transport: "unix", path: socket } } as never,
  );
  try {
    const r = await fetch(`http://localhost${path}`, { client } as RequestInit);
    return {
      status: r.status,
      type: r.headers.get("content-type"),
      bytes: new Uint8Array(await r.arrayBuffer()),
    };
  } finally {
    client.close();
  }
}

Deno.test("GET /snapshot gives the live blocks of a running job as a snapshot memory_viz opens, pickle or JSON", async () => {
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
    const dir = tempDir();
    const files: string[] = [];
    for (
      const [query, name] of [["", "live.pickle"], [
        "&format=json&device=0",
        "live.json",
      ]]
    ) {
      const r = await fetchBytes(socket, `/snapshot?pid=${pid}${query}`);
      assert.equal(r.status, 200, new TextDecoder().decode(r.bytes));
      assert.equal(
        r.type,
        name.endsWith("json") ? "application/json" : "application/octet-stream",
      );
      Deno.writeFileSync(`${dir}/${name}`, r.bytes);
      files.push(`${dir}/${name}`);
    }
    // The newest 2 trace entries, as --max-entries 2: C's segment and block.
    const newest = await fetchBytes(
      socket,
      `/snapshot?pid=${pid}&max_entries=2`,
    );
    assert.equal(newest.status, 200, new TextDecoder().decode(newest.bytes));
    Deno.writeFileSync(`${dir}/newest.pickle`, newest.bytes);
    const results = await checkSnapshots([...files, `${dir}/newest.pickle`]);
    for (const c of results) {
      assert.ok(c.ok, c.error);
      // ONE (4 bytes), A (256), B (1024), C (64): each runtime allocation used whole.
      assert.equal(c.segsum_segments, 4);
      assert.equal(c.allocated, 4 + 256 + 1024 + 64);
      assert.deepEqual(
        c.trace_entries,
        c.file.endsWith("newest.pickle") ? [2] : [8],
      );
    }
    const refused: Array<[string, number, RegExp]> = [
      ["/snapshot", 400, /^Missing pid: /],
      ["/snapshot?pid=1", 404, /^Unknown pid: 1 is not a traced process/],
      [
        `/snapshot?pid=${pid}&format=xml`,
        400,
        /^Invalid format: "xml"; use pickle/,
      ],
      [`/snapshot?pid=${pid}&device=x`, 400, /^Invalid device: "x"/],
      [
        `/snapshot?pid=${pid}&max_entries=-1`,
        400,
        /^Invalid max_entries: "-1"; give a whole number/,
      ],
      [
        `/snapshot?pid=${pid}&device=5`,
        404,
        /^No memory of device 5 in the log/,
      ],
    ];
    for (const [path, status, re] of refused) {
      const r = await requestSocket(socket, "GET", path);
      assert.equal(r.status, status, path);
      assert.match((r.body as { error: string }).error, re, path);
    }
    Deno.writeTextFileSync(gate, "");
    assert.equal((await job.done).code, 0, job.stderr);
  } finally {
    Deno.writeTextFileSync(gate, "");
    daemon.child.kill("SIGTERM");
    await daemon.done;
  }
});

Deno.test("GET /snapshot of a CPU job that has not marked yet holds the tensors it keeps, the hook's held rows included", async () => {
  const out = tempDir();
  const daemon = await startDaemonProcess(out);
  const socket = `${out}/stompwatch.sock`;
  const gate = `${tempDir()}/go`;
  const script = new URL("../python/live_cpu.py", import.meta.url).pathname;
  const job = new Spawned(STOMPWATCH, [
    "run",
    "--daemon",
    socket,
    "--",
    "python3",
    script,
    gate,
  ]);
  try {
    const [, pid] = await job.line(/^ready (\d+)$/);
    const dir = tempDir();
    const allocated = await eventually(async () => {
      const r = await fetchBytes(socket, `/snapshot?pid=${pid}`);
      assert.equal(r.status, 200);
      Deno.writeFileSync(`${dir}/live.pickle`, r.bytes);
      const [c] = await checkSnapshots([`${dir}/live.pickle`]);
      assert.ok(c.ok, c.error);
      return c.allocated >= 3 * 4000 ? c.allocated : undefined;
    });
    assert.ok(allocated >= 3 * 4000, `${allocated}`);
    Deno.writeTextFileSync(gate, "");
    assert.equal((await job.done).code, 0);
  } finally {
    Deno.writeTextFileSync(gate, "");
    await job.done;
    daemon.child.kill("SIGTERM");
    await daemon.done;
  }
});
