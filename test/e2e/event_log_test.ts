/**
 * The event log and the leak analyses against real jobs: the log of a run
 * fed straight back into check-leaks, the online rule's summary at exit,
 * marks from outside the job, and the analyses over the socket.
 */
import assert from "node:assert/strict";
import { checkLeaksFile } from "../../analysis/leaks/mod.ts";
import { EVENT_LOG_HEADER } from "../../analysis/memscope_csv/mod.ts";
import {
  eventually,
  requestSocket,
  Spawned,
  startDaemonProcess,
  STOMPWATCH,
  stompwatch,
  tempDir,
  workload,
} from "./_harness.ts";
import type { ProcessInfo } from "../../watch/types.ts";

function logOf(out: string, device = 0): string {
  const dir = `${out}/device_${device}`;
  const [file] = [...Deno.readDirSync(dir)].filter((e) =>
    /^memscope_dump_\d{14}\.csv$/.test(e.name)
  );
  assert.ok(file, `no memscope_dump_*.csv in ${dir}`);
  return `${dir}/${file.name}`;
}

Deno.test("the event log of a run holds every event and check_leaks finds the block the job leaked", async () => {
  const out = tempDir();
  const r = await stompwatch(["run", "--output", out, "--", workload("marks")]);
  assert.equal(r.code, 0, r.stderr);
  const leaked = /leaked=(0x[0-9a-f]+)/.exec(r.stdout)![1];
  const path = logOf(out);
  assert.equal((Deno.statSync(path).mode ?? 0) & 0o777, 0o600);
  const lines = Deno.readTextFileSync(path).trimEnd().split("\n");
  assert.equal(lines[0], EVENT_LOG_HEADER);
  const rows = lines.slice(1).map((l) => l.split(","));
  // IDs increase, one per row.
  rows.forEach((row, i) => assert.equal(Number(row[0]), i + 1));
  const kinds = rows.map((row) => `${row[1]},${row[2]}`);
  assert.equal(kinds[0], "SYSTEM,PROC_START");
  assert.equal(kinds.at(-1), "SYSTEM,PROC_EXIT");
  assert.equal(kinds.filter((k) => k === "MSTX,Mark").length, 4);
  assert.equal(kinds.filter((k) => k === "MSTX,Range_start").length, 4);
  assert.equal(kinds.filter((k) => k === "MALLOC,HAL").length, 5);
  assert.equal(kinds.filter((k) => k === "FREE,HAL").length, 5);
  const malloc = lines.find((l) =>
    l.includes(`MALLOC,HAL`) && l.includes(leaked.slice(2))
  )!;
  assert.match(
    malloc,
    /"\{allocation_id:2,addr:0x[0-9a-f]{16},size:1048576,used:1052672\}"/,
  );

  const result = await checkLeaksFile(path, {
    mstxInfo: "step",
    startIndex: 0,
  });
  assert.equal(result.leakCount, 1);
  assert.equal(result.devices[0].leaks[0].bytes, 1048576);
  assert.equal(BigInt(result.devices[0].leaks[0].ptr), BigInt(leaked));
  const clean = await checkLeaksFile(path, { mstxInfo: "step", startIndex: 1 });
  assert.equal(clean.leakCount, 0);
});

Deno.test("run prints the online leak summary for a block allocated after step 1 and kept across steps", async () => {
  const out = tempDir();
  const r = await stompwatch([
    "run",
    "--output",
    out,
    "--",
    workload("marks"),
    "1",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const leaked = BigInt(/leaked=(0x[0-9a-f]+)/.exec(r.stdout)![1]);
  assert.ok(
    r.stderr.includes("====== ERROR: Detected memory leaks on device 0 ======"),
    r.stderr,
  );
  assert.ok(
    r.stderr.includes(
      `Direct HAL leak of 1.000000 Mb(s) at 0x${
        leaked.toString(16)
      } in kernel_0 at step 2.`,
    ),
    r.stderr,
  );
  assert.ok(
    r.stderr.includes(
      "====== SUMMARY: 1 Mb(s) leaked in 1 allocation(s) ======",
    ),
    r.stderr,
  );
  assert.match(r.stderr, /Memory fluctuation on device 0 \(HAL\) at step 3/);
});

Deno.test("run prints no leak summary when every block is freed within its step", async () => {
  const out = tempDir();
  const r = await stompwatch(["run", "--output", out, "--", workload("marks")]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stderr.includes("Detected memory leaks"), r.stderr);
});

Deno.test("marks, leaks, fluctuation and check_leaks over the socket while a job runs", async () => {
  const out = tempDir();
  const daemon = await startDaemonProcess(out);
  const socket = `${out}/stompwatch.sock`;
  const gate = `${tempDir()}/go`;
  try {
    const job = new Spawned(STOMPWATCH, [
      "run",
      "--daemon",
      socket,
      "--",
      workload("stomp"),
      "--wait-file",
      gate,
    ]);
    await job.line(/^ready$/);
    const pid = await eventually(async () => {
      const r = await requestSocket(socket, "GET", "/processes");
      return (r.body as { processes: ProcessInfo[] }).processes.find((p) =>
        p.command.includes(gate)
      )?.pid;
    });
    for (const message of ["step", "=HYPERLINK(1)", "step", "step"]) {
      const m = await requestSocket(socket, "POST", "/marks", { message, pid });
      assert.equal(m.status, 200, JSON.stringify(m.body));
      assert.deepEqual(m.body, { marked: [pid] });
    }
    const all = await requestSocket(socket, "POST", "/marks", {
      message: "all",
    });
    assert.deepEqual(all.body, { marked: [pid] });

    const log = Deno.readTextFileSync(logOf(out));
    assert.match(
      log,
      new RegExp(`,MSTX,Mark,'=HYPERLINK\\(1\\),\\d+,${pid},0,0,N/A,,,\n`),
    );
    assert.equal(log.match(/,MSTX,Mark,step,/g)?.length, 3);

    const check = await requestSocket(socket, "POST", "/check_leaks", {
      mstx_info: "step",
      start_index: 0,
    });
    assert.equal(check.status, 200, JSON.stringify(check.body));
    const body = check.body as {
      leaks_found: boolean;
      results: Array<{ report: string[] }>;
    };
    // The stomp job's buffers, allocated before the first mark, are not
    // between A and B: nothing leaks.
    assert.equal(body.leaks_found, false);
    assert.deepEqual(body.results[0].report, [
      "INFO: Starting to analyze data for device 0...",
      "",
      "Leak Analysis Results for the Custom Range:",
      "No hal memory leaks detected on device 0.",
    ]);

    const leaks = await requestSocket(socket, "GET", `/leaks?pid=${pid}`);
    assert.equal(leaks.status, 200);
    assert.deepEqual(leaks.body, {
      processes: [{ pid, step: 0, suspects: [] }],
    });
    const fl = await requestSocket(socket, "GET", "/fluctuation");
    assert.equal(fl.status, 200);

    Deno.writeTextFileSync(gate, "");
    assert.equal((await job.done).code, 0, job.stderr);
  } finally {
    daemon.child.kill("SIGTERM");
    await daemon.done;
  }
});

Deno.test("bad requests to the memory routes get one clear message each", async () => {
  const out = tempDir();
  const daemon = await startDaemonProcess(out);
  const socket = `${out}/stompwatch.sock`;
  const secret = `${tempDir()}/secret`;
  Deno.writeTextFileSync(secret, "password=hunter2\n");
  try {
    const cases: Array<[string, string, unknown, number, RegExp]> = [
      ["POST", "/marks", {}, 400, /Missing field message/],
      [
        "POST",
        "/marks",
        { message: "x", pid: 999999 },
        404,
        /Unknown pid: 999999/,
      ],
      [
        "POST",
        "/check_leaks",
        { start_index: 0 },
        400,
        /Missing mstx_info/,
      ],
      [
        "POST",
        "/check_leaks",
        { mstx_info: "s", start_index: -1 },
        400,
        /Invalid start_index value: -1; /,
      ],
      [
        "POST",
        "/check_leaks",
        { mstx_info: "s", event_type: "GPU" },
        400,
        /Invalid event_type/,
      ],
      [
        "POST",
        "/check_leaks",
        { mstx_info: "s", input_path: "/nonexistent.csv" },
        400,
        /no such file/,
      ],
      ["POST", "/check_leaks", { mstx_info: "s" }, 409, /no device rows yet/],
      [
        "POST",
        "/check_leaks",
        { mstx_info: "s", input_path: secret },
        400,
        /^Not an msMemScope event log: .*secret has no ID and Event columns/,
      ],
      ["GET", "/leaks?pid=abc", undefined, 400, /Invalid pid/],
    ];
    for (const [method, path, body, status, re] of cases) {
      const r = await requestSocket(socket, method, path, body);
      assert.equal(
        r.status,
        status,
        `${method} ${path}: ${JSON.stringify(r.body)}`,
      );
      assert.match((r.body as { error: string }).error, re);
      // Never the contents of a file that is not an event log.
      assert.ok(!JSON.stringify(r.body).includes("hunter2"));
    }
  } finally {
    daemon.child.kill("SIGTERM");
    await daemon.done;
  }
});
