/**
 * `run`s started together on one output directory share one daemon: the
 * first starts it, the others attach, and it stays until every job that
 * reports to it has ended.
 */
import assert from "node:assert/strict";
import {
  eventually,
  requestSocket,
  startDaemonProcess,
  stompwatch,
  tempDir,
  workload,
} from "./_harness.ts";

Deno.test("three runs started at once on one output directory all run their jobs, traced", async () => {
  const out = tempDir();
  const marker = tempDir();
  const runs = await Promise.all([0, 1, 2].map((i) =>
    stompwatch([
      "run",
      "--output",
      out,
      "--",
      "bash",
      "-c",
      `${workload("stomp")} && touch ${marker}/${i} && exit 7`,
    ])
  ));
  for (const r of runs) {
    assert.equal(r.code, 7, r.stderr);
    assert.doesNotMatch(r.stderr, /already listening|did not answer|untraced/);
  }
  assert.deepEqual(
    [...Deno.readDirSync(marker)].map((e) => e.name).sort(),
    ["0", "1", "2"],
  );
  const attached = runs.filter((r) =>
    /a daemon already serves .*: the job reports to it, as with --daemon .*stompwatch\.sock/
      .test(r.stderr)
  );
  assert.ok(attached.length >= 1, runs.map((r) => r.stderr).join("\n"));
  // Every job's events reached the one event log.
  const log = [...Deno.readDirSync(`${out}/device_0`)].filter((e) =>
    e.name.startsWith("memscope_dump_")
  );
  assert.ok(log.length >= 1);
});

Deno.test("the run whose daemon serves OUT keeps it until an attached run's job has ended, traced", async () => {
  const out = tempDir();
  const m = tempDir();
  const stomp = workload("stomp");
  // A's job ends while B's still runs: files order them, not time.
  const a = stompwatch([
    "run",
    "--output",
    out,
    "--",
    "bash",
    "-c",
    `while [ ! -e ${m}/b_started ]; do sleep 0.02; done; ${stomp} && touch ${m}/a_done`,
  ]);
  await eventually(async () => {
    try {
      const r = await requestSocket(`${out}/stompwatch.sock`, "GET", "/health");
      return r.status === 200 || undefined;
    } catch {
      return undefined;
    }
  });
  const b = stompwatch([
    "run",
    "--output",
    out,
    "--",
    "bash",
    "-c",
    `touch ${m}/b_started; while [ ! -e ${m}/a_done ]; do sleep 0.02; done; ${stomp} && exit 5`,
  ]);
  const [ra, rb] = await Promise.all([a, b]);
  assert.equal(ra.code, 0, ra.stderr);
  assert.equal(rb.code, 5, rb.stderr);
  assert.match(rb.stderr, /a daemon already serves/);
  assert.doesNotMatch(rb.stderr, /untraced|did not answer/);
  assert.match(
    ra.stderr,
    /waiting for the jobs of other runs that report to this daemon/,
  );
});

Deno.test("run on an output directory held by a daemon that does not answer is refused and its job never runs", async () => {
  const out = tempDir();
  const d = await startDaemonProcess(out);
  try {
    // Its socket gone, the daemon still holds OUT/daemon.lock.
    Deno.removeSync(`${out}/stompwatch.sock`);
    const marker = `${tempDir()}/job_ran`;
    const r = await stompwatch(["run", "--output", out, "--", "touch", marker]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^stompwatch: Cannot use --output \S+: a daemon holds \S+\/daemon\.lock but does not answer at \S+\/stompwatch\.sock; wait for it, stop it, or pick another --output\n$/,
    );
    assert.throws(() => Deno.statSync(marker), Deno.errors.NotFound);
  } finally {
    d.child.kill("SIGTERM");
    await d.done;
  }
});
