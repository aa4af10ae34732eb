/**
 * OOM snapshots under `./stompwatch run`: a workload that runs the test
 * device out of memory (and aborts right after, as frameworks do) with
 * OOM_SNAPSHOT_ENABLE 1, 2 and 0, and a bad OOM_SNAPSHOT_PATH. The files
 * are checked by Python's pickle and torch's _memory_viz.py.
 */
import assert from "node:assert/strict";
import {
  eventually,
  startDaemonProcess,
  STOMPWATCH,
  stompwatch,
  tempDir,
  workload,
} from "./_harness.ts";
import { checkSnapshots } from "../analysis/snapshot/_check.ts";

const MiB = 1 << 20;

/** Runs the oom workload (16 MiB device, 1 MiB blocks, abort) in `cwd`. */
async function runOom(cwd: string, env: Record<string, string>) {
  const out = await new Deno.Command(STOMPWATCH, {
    args: [
      "run",
      "--output",
      `${cwd}/out`,
      "--",
      workload("oom"),
      `${MiB}`,
      "abort",
    ],
    cwd,
    env: { STOMPWATCH_TEST_DEVICE_BYTES: `${16 * MiB}`, ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

function oomFiles(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name)
    .filter((n) => /^(oom_snapshot_|device_\d+_memUsageInfo_)/.test(n)).sort();
}

Deno.test("OOM_SNAPSHOT_ENABLE=1: a job that aborts right after its failed allocation leaves a snapshot with history and the memUsageInfo CSV", async () => {
  const cwd = tempDir();
  Deno.mkdirSync(`${cwd}/snaps`);
  const r = await runOom(cwd, {
    OOM_SNAPSHOT_ENABLE: "1",
    OOM_SNAPSHOT_PATH: "snaps",
  });
  assert.equal(r.code, 134, r.stderr); // 128 + SIGABRT
  const count = Number(/oom: count=(\d+)/.exec(r.stdout)![1]);
  const files = oomFiles(`${cwd}/snaps`);
  assert.equal(files.length, 2, files.join(" "));
  const [csv, pickle] = files;
  assert.match(csv, /^device_0_memUsageInfo_\d{14}\.csv$/);
  assert.match(pickle, /^oom_snapshot_\d+_\d{14}\.pickle$/);
  assert.match(
    r.stderr,
    new RegExp(
      `out of memory on device 0 in pid \\d+: wrote ${cwd}/snaps/${pickle}`,
    ),
  );
  assert.equal(
    Deno.readTextFileSync(`${cwd}/snaps/${csv}`),
    `moduleName,curMemSize(MB),memPeakSize(MB)\nHAL,${count.toFixed(4)},${
      count.toFixed(4)
    }\n`,
  );
  const [c] = await checkSnapshots([`${cwd}/snaps/${pickle}`]);
  assert.ok(c.ok, c.error);
  assert.equal(c.allocated, count * MiB);
  // Per block segment_alloc + alloc, then the oom entry.
  assert.deepEqual(c.trace_entries, [2 * count + 1]);
  const last = JSON.parse(
    new TextDecoder().decode(
      (await new Deno.Command("python3", {
        args: [
          "-c",
          "import pickle,json,sys;print(json.dumps(pickle.load(open(sys.argv[1],'rb'))['device_traces'][0][-1]))",
          `${cwd}/snaps/${pickle}`,
        ],
        stdout: "piped",
      }).output()).stdout,
    ),
  );
  assert.equal(last.action, "oom");
  assert.equal(last.size, MiB);
  // What the test runtime had left: less than the 1 MiB block asked for.
  assert.ok(
    last.device_free > 0 && last.device_free < MiB,
    `${last.device_free}`,
  );
});

Deno.test("OOM_SNAPSHOT_ENABLE=2: the snapshot holds the state only, in the job's working directory by default", async () => {
  const cwd = tempDir();
  const r = await runOom(cwd, { OOM_SNAPSHOT_ENABLE: "2" });
  assert.equal(r.code, 134, r.stderr);
  const count = Number(/oom: count=(\d+)/.exec(r.stdout)![1]);
  const files = oomFiles(cwd);
  assert.equal(files.length, 2, files.join(" "));
  const [c] = await checkSnapshots([`${cwd}/${files[1]}`]);
  assert.ok(c.ok, c.error);
  assert.deepEqual(c.trace_entries, []);
  assert.equal(c.segsum_segments, count);
  assert.equal(c.allocated, count * MiB);
});

Deno.test("OOM_SNAPSHOT_ENABLE=0 or unset: no OOM files", async () => {
  const envs: Array<Record<string, string>> = [
    { OOM_SNAPSHOT_ENABLE: "0" },
    {},
  ];
  for (const env of envs) {
    const cwd = tempDir();
    const r = await runOom(cwd, env);
    assert.equal(r.code, 134, r.stderr);
    assert.deepEqual(oomFiles(cwd), []);
    assert.doesNotMatch(r.stderr, /out of memory/);
  }
});

Deno.test("run refuses an OOM_SNAPSHOT_PATH that is not a directory before the job starts", async () => {
  const cwd = tempDir();
  Deno.writeTextFileSync(`${cwd}/afile`, "");
  for (const path of [`${cwd}/missing`, `${cwd}/afile`]) {
    const out = await new Deno.Command(STOMPWATCH, {
      args: ["run", "--output", `${cwd}/out`, "--", "touch", `${cwd}/started`],
      env: { OOM_SNAPSHOT_ENABLE: "1", OOM_SNAPSHOT_PATH: path },
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2);
    assert.equal(
      stderr,
      `stompwatch: OOM_SNAPSHOT_PATH is invalid. ${path}: not an existing directory; create it, or unset OOM_SNAPSHOT_PATH to write into the job's working directory\n`,
    );
    assert.throws(() => Deno.statSync(`${cwd}/started`));
  }
});

Deno.test("a job attached with env gets OOM files from the daemon, its relative OOM_SNAPSHOT_PATH taken from its own working directory; a bad one is said on its stderr", async () => {
  const out = tempDir();
  const daemon = await startDaemonProcess(out);
  try {
    const env = await stompwatch(["env", "--output", out]);
    assert.equal(env.code, 0, env.stderr);
    const vars: Record<string, string> = {};
    for (const m of env.stdout.matchAll(/^export (\w+)='([^']*)'/gm)) {
      vars[m[1]] = m[2];
    }
    const job = async (cwd: string, path: string) =>
      await new Deno.Command(workload("oom"), {
        args: [`${MiB}`, "abort"],
        cwd,
        env: {
          ...vars,
          STOMPWATCH_TEST_DEVICE_BYTES: `${16 * MiB}`,
          OOM_SNAPSHOT_ENABLE: "1",
          OOM_SNAPSHOT_PATH: path,
        },
        stdout: "piped",
        stderr: "piped",
      }).output();
    const cwd = tempDir();
    Deno.mkdirSync(`${cwd}/snaps`);
    const ran = await job(cwd, "snaps");
    assert.equal(ran.signal, "SIGABRT");
    const files = await eventually(() => {
      const f = oomFiles(`${cwd}/snaps`);
      return f.length === 2 ? f : undefined;
    });
    const [c] = await checkSnapshots([`${cwd}/snaps/${files[1]}`]);
    assert.ok(c.ok, c.error);

    const other = tempDir();
    const bad = await job(other, "missing");
    assert.equal(bad.signal, "SIGABRT");
    assert.match(
      new TextDecoder().decode(bad.stderr),
      /^stompwatch: OOM_SNAPSHOT_PATH is invalid\. missing \(no OOM snapshots for this process\)$/m,
    );
    assert.deepEqual(oomFiles(other), []);
  } finally {
    daemon.child.kill("SIGTERM");
    await daemon.done;
  }
});
