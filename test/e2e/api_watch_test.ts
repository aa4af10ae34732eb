/**
 * The HTTP API over the daemon's Unix socket, against jobs that really run:
 * watches added and removed while a job runs, every bad input, a daemon
 * killed mid-job, two jobs at once, and the TCP listener's token.
 */
import assert from "node:assert/strict";
import {
  checksumRows,
  eventually,
  requestSocket,
  Spawned,
  startDaemonProcess,
  STOMPWATCH,
  stompwatch,
  tempDir,
  workload,
} from "./_harness.ts";
import type { ProcessInfo, WatchInfo } from "../../watch/types.ts";

interface Job {
  proc: Spawned;
  pid: number;
  a: string;
  b: string;
  go: () => void;
}

/** Starts the stomp workload under `run --daemon`, paused before its ops. */
async function startJob(
  out: string,
  extraEnv: Record<string, string> = {},
  runArgs: string[] = [],
): Promise<Job> {
  const gate = `${tempDir()}/go`;
  const proc = new Spawned(
    STOMPWATCH,
    [
      "run",
      "--daemon",
      `${out}/stompwatch.sock`,
      ...runArgs,
      "--",
      workload("stomp"),
      "--wait-file",
      gate,
    ],
    extraEnv,
  );
  const m = await proc.line(/^stomp: A=(0x[0-9a-f]+) B=(0x[0-9a-f]+) C=/);
  await proc.line(/^ready$/);
  const socket = `${out}/stompwatch.sock`;
  // The job's pid is the one process whose command runs the workload.
  const pid = await eventually(async () => {
    const r = await requestSocket(socket, "GET", "/processes");
    const procs = (r.body as { processes: ProcessInfo[] }).processes;
    return procs.find((p) => p.command.includes(gate) && !p.exited)?.pid;
  });
  return {
    proc,
    pid,
    a: m[1],
    b: m[2],
    go: () => Deno.writeTextFileSync(gate, ""),
  };
}

async function withDaemon(
  fn: (out: string, socket: string) => Promise<void>,
): Promise<void> {
  const out = tempDir();
  const daemon = await startDaemonProcess(out);
  try {
    await fn(out, `${out}/stompwatch.sock`);
  } finally {
    daemon.child.kill("SIGTERM");
    await daemon.done;
  }
}

Deno.test("a watch added over the socket while the job runs catches the stomp, and remove ends it", async () => {
  await withDaemon(async (out, socket) => {
    const job = await startJob(out);
    const add = await requestSocket(socket, "POST", "/watch", {
      pid: job.pid,
      name: "b",
      addr: job.b,
      length: 256,
    });
    assert.equal(add.status, 201, JSON.stringify(add.body));
    job.go();
    assert.equal((await job.proc.done).code, 0, job.proc.stderr);
    const w = await requestSocket(socket, "GET", "/watches/b");
    assert.equal(w.status, 200);
    const info = w.body as WatchInfo;
    assert.equal(info.stomp, true);
    assert.equal(info.first_change?.op, "Copy");
    // The job is gone: its watch can take no more samples and has ended.
    assert.equal(info.state, "ended");
    const listed = await requestSocket(socket, "GET", "/watches");
    assert.deepEqual(
      (listed.body as { watches: WatchInfo[] }).watches.map((w) => w.state),
      ["ended"],
    );
    assert.ok(job.proc.stderr.includes("STOMPED by Copy #1"), job.proc.stderr);
    const report = JSON.parse(
      Deno.readTextFileSync(`${out}/watch_dump/watch_report.json`),
    );
    assert.equal(
      report.watches.find((x: WatchInfo) => x.name === "b").stomp,
      true,
    );
    const dumps = await requestSocket(socket, "GET", "/dumps?pid=" + job.pid);
    assert.ok((dumps.body as { dumps: unknown[] }).dumps.length >= 1);
  });
});

Deno.test("remove over the socket stops the samples of that block", async () => {
  await withDaemon(async (out, socket) => {
    const job = await startJob(out);
    assert.equal(
      (await requestSocket(socket, "POST", "/watch", {
        pid: job.pid,
        name: "a",
        addr: job.a,
        length: 256,
      })).status,
      201,
    );
    const rm = await requestSocket(socket, "POST", "/remove", { name: "a" });
    assert.equal(rm.status, 200, JSON.stringify(rm.body));
    job.go();
    assert.equal((await job.proc.done).code, 0);
    assert.deepEqual(
      checksumRows(`${out}/watch_dump`).filter(([info]) =>
        info.includes("-a_0_")
      ),
      [],
    );
    const w = (await requestSocket(socket, "GET", "/watches/a"))
      .body as WatchInfo;
    assert.equal(w.state, "removed");
  });
});

Deno.test("dump_nums limits the before/after pairs of one watch without stopping the others", async () => {
  await withDaemon(async (out, socket) => {
    const job = await startJob(out);
    await requestSocket(socket, "POST", "/watch", {
      pid: job.pid,
      name: "a",
      addr: job.a,
      length: 256,
      dump_nums: 2,
    });
    await requestSocket(socket, "POST", "/watch", {
      pid: job.pid,
      name: "b",
      addr: job.b,
      length: 256,
    });
    job.go();
    assert.equal((await job.proc.done).code, 0);
    const rows = checksumRows(`${out}/watch_dump`);
    assert.equal(rows.filter(([i]) => i.includes("-a_0_")).length, 4);
    assert.equal(rows.filter(([i]) => i.includes("-b_0_")).length, 10);
  });
});

Deno.test("the API answers every bad watch request with a status and a message a person can act on", async () => {
  await withDaemon(async (out, socket) => {
    const job = await startJob(out);
    const post = (body: unknown) =>
      requestSocket(socket, "POST", "/watch", body);
    const base = { pid: job.pid, name: "w", addr: job.a, length: 64 };
    const cases: Array<[unknown, number, RegExp]> = [
      [{ ...base, name: undefined }, 400, /name/i],
      [{ ...base, name: "x".repeat(65) }, 400, /64/],
      [{ ...base, dump_nums: 0 }, 400, /dump_nums/],
      [{ ...base, dump_nums: -2 }, 400, /dump_nums/],
      [{ ...base, pid: 999999 }, 404, /999999/],
      [
        { ...base, addr: "0x10", length: 64 },
        422,
        new RegExp(`nearest live block is ${job.a.replace(/^0x0*/, "0x0*")}`),
      ],
      [{ ...base, length: 100000 }, 422, /not inside one live allocation/],
      ["{not json", 400, /JSON/],
    ];
    for (const [body, status, message] of cases) {
      const r = await post(body);
      assert.equal(
        r.status,
        status,
        `${JSON.stringify(body)} -> ${JSON.stringify(r.body)}`,
      );
      const error = (r.body as { error: string }).error;
      assert.match(error, message);
      assert.ok(!/\n\s+at /.test(error), "no stack trace");
    }
    for (const bad of ["..%2Fdaemon.json", "..%2F..%2Fetc%2Fpasswd", "a%2Fb"]) {
      const r = await requestSocket(socket, "GET", `/dumps/${bad}`);
      assert.equal(r.status, 400, `${bad}: ${JSON.stringify(r.body)}`);
    }
    job.go();
    assert.equal((await job.proc.done).code, 0);
  });
});

Deno.test("a job attached with launch blocking off gets 409 on POST /watch", async () => {
  await withDaemon(async (out, socket) => {
    const env = await stompwatch(["env", "--output", out]);
    assert.equal(env.code, 0, env.stderr);
    const vars: Record<string, string> = {};
    for (const m of env.stdout.matchAll(/^export (\w+)='([^']*)'/gm)) {
      vars[m[1]] = m[2];
    }
    assert.ok(vars.LD_PRELOAD && vars.STOMPWATCH_RING_DIR);
    const gate = `${tempDir()}/go`;
    const job = new Spawned(workload("stomp"), ["--wait-file", gate], {
      ...vars,
      ASCEND_LAUNCH_BLOCKING: "0",
    });
    const m = await job.line(/^stomp: A=(0x[0-9a-f]+)/);
    const pid = job.child.pid;
    await eventually(async () => {
      const r = await requestSocket(socket, "GET", "/processes");
      return (r.body as { processes: ProcessInfo[] }).processes.find((p) =>
        p.pid === pid
      );
    });
    const r = await requestSocket(socket, "POST", "/watch", {
      pid,
      name: "w",
      addr: m[1],
      length: 64,
    });
    assert.equal(r.status, 409);
    assert.match((r.body as { error: string }).error, /ASCEND_LAUNCH_BLOCKING/);
    Deno.writeTextFileSync(gate, "");
    assert.equal((await job.done).code, 0);
  });
});

Deno.test("a daemon killed with SIGKILL mid-job does not take the job down", async () => {
  const out = tempDir();
  const daemon = await startDaemonProcess(out);
  const job = await startJob(out, { STOMPWATCH_RING_BYTES: String(1 << 20) });
  await requestSocket(`${out}/stompwatch.sock`, "POST", "/watch", {
    pid: job.pid,
    name: "b",
    addr: job.b,
    length: 256,
    full_content: true,
  });
  daemon.child.kill("SIGKILL");
  await daemon.done;
  job.go();
  const status = await job.proc.done;
  assert.equal(status.code, 0, job.proc.stderr);
});

Deno.test("two traced processes at once keep their files apart", async () => {
  await withDaemon(async (out, socket) => {
    const one = await startJob(out);
    const two = await startJob(out);
    assert.notEqual(one.pid, two.pid);
    await requestSocket(socket, "POST", "/watch", {
      pid: one.pid,
      name: "b",
      addr: one.b,
      length: 256,
    });
    await requestSocket(socket, "POST", "/watch", {
      pid: two.pid,
      name: "b",
      addr: two.b,
      length: 256,
    });
    one.go();
    two.go();
    assert.equal((await one.proc.done).code, 0);
    assert.equal((await two.proc.done).code, 0);
    const csvs = [...Deno.readDirSync(`${out}/watch_dump`)].filter((e) =>
      e.name.endsWith(".csv")
    );
    assert.equal(csvs.length, 2, csvs.map((c) => c.name).join(" "));
    const r = await requestSocket(socket, "GET", "/watches/b");
    assert.equal(r.status, 409, "two pids share the name: the API asks which");
    for (const pid of [one.pid, two.pid]) {
      const w = (await requestSocket(socket, "GET", `/watches/b?pid=${pid}`))
        .body as WatchInfo;
      assert.equal(w.stomp, true);
      assert.ok(w.first_change?.before_file.includes(`_Copy_1-b_0_before`));
    }
  });
});

Deno.test("the TCP listener refuses a request without the token from OUT/token", async () => {
  const out = tempDir();
  const port = 20000 + Math.floor(Math.random() * 20000);
  const daemon = await startDaemonProcess(out, [
    "--listen",
    `127.0.0.1:${port}`,
  ]);
  try {
    const token = Deno.readTextFileSync(`${out}/token`).trim();
    assert.equal(Deno.statSync(`${out}/token`).mode! & 0o777, 0o600);
    assert.equal(Deno.statSync(`${out}/stompwatch.sock`).mode! & 0o777, 0o600);
    assert.equal(Deno.statSync(out).mode! & 0o777, 0o700);
    const url = `http://127.0.0.1:${port}`;
    const health = await fetch(`${url}/health`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
    const refused = await fetch(`${url}/watches`);
    assert.equal(refused.status, 401);
    assert.match((await refused.json()).error, /token/);
    const wrong = await fetch(`${url}/watches`, {
      headers: { authorization: "Bearer nope" },
    });
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    const ok = await fetch(`${url}/watches`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
  } finally {
    daemon.child.kill("SIGTERM");
    await daemon.done;
  }
});

Deno.test("the daemon refuses a --listen address that is not loopback", async () => {
  const r = await stompwatch([
    "daemon",
    "--output",
    tempDir(),
    "--listen",
    "0.0.0.0:8080",
  ]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /loopback only/);
});
