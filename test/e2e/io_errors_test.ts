/**
 * A daemon whose files cannot be written (read-only file system, disk
 * full, directory removed) keeps running: it says so once on stderr and in
 * GET /health, keeps the rows, and writes them when it can again.
 */
import assert from "node:assert/strict";
import { EVENT_LOG_HEADER } from "../../analysis/memscope_csv/mod.ts";
import type { IoProblem } from "../../watch/io_problems.ts";
import type { WatchReport } from "../../watch/report.ts";
import {
  checksumRows,
  eventually,
  requestSocket,
  type Spawned,
  startDaemonProcess,
  stompwatch,
  tempDir,
  workload,
} from "./_harness.ts";
import { MOUNT_SKIP, mountTmpfs, remount, unmount } from "./_mounts.ts";

async function problems(out: string): Promise<IoProblem[]> {
  const r = await requestSocket(`${out}/stompwatch.sock`, "GET", "/health");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return (r.body as { ioProblems: IoProblem[] }).ioProblems;
}

/** The rows of the one event log in `dir`, checked to be whole and in order. */
function logRows(dir: string): string[][] {
  const files = [...Deno.readDirSync(dir)].filter((e) =>
    /^memscope_dump_\d{14}\.csv$/.test(e.name)
  );
  assert.equal(files.length, 1, `one log in ${dir}`);
  const text = Deno.readTextFileSync(`${dir}/${files[0].name}`);
  assert.ok(text.endsWith("\n"), "the log ends on a row boundary");
  const lines = text.trimEnd().split("\n");
  assert.equal(lines[0], EVENT_LOG_HEADER);
  const rows = lines.slice(1).map((l) => l.split(","));
  const ids = rows.map((r) => Number(r[0]));
  ids.forEach((id, i) => assert.equal(id, ids[0] + i, "no row lost"));
  return rows;
}

async function stop(d: Spawned): Promise<void> {
  d.child.kill("SIGTERM");
  const status = await d.done;
  assert.equal(status.code, 0, d.stderr);
}

function kill(d: Spawned): void {
  try {
    d.child.kill("SIGKILL");
  } catch { /* stopped already */ }
}

function runWith(out: string, args: string[], job: string[]) {
  return stompwatch([
    "run",
    "--daemon",
    `${out}/stompwatch.sock`,
    ...args,
    "--",
    ...job,
  ]);
}

Deno.test({
  name:
    "a daemon whose log directory is read-only keeps serving, says which file failed, and writes every row once it is writable",
  ignore: MOUNT_SKIP !== undefined,
  async fn() {
    const out = tempDir();
    const dev0 = `${out}/device_0`;
    Deno.mkdirSync(dev0);
    mountTmpfs(dev0, "ro,size=1m");
    let d: Spawned | undefined;
    try {
      d = await startDaemonProcess(out);
      const r = await runWith(out, [], [workload("marks")]);
      assert.equal(r.code, 0, r.stderr);
      const [p] = await problems(out);
      assert.match(p.file, /\/device_0\/memscope_dump_\d{14}\.csv$/);
      assert.match(p.error, /Read-only file system/);
      assert.ok(p.keptBytes > 0);
      assert.equal(p.dropped, 0);
      unmount(dev0);
      await eventually(async () =>
        (await problems(out)).length === 0 || undefined
      );
      const rows = logRows(dev0);
      assert.equal(rows[0][2], "PROC_START");
      assert.equal(rows.at(-1)![2], "PROC_EXIT");
      assert.equal(rows.filter((r) => r[1] === "MALLOC").length, 5);
      const said = d.stderr.match(/cannot write [^\n]*device_0/g) ?? [];
      assert.equal(said.length, 1, d.stderr);
      assert.match(d.stderr, /writing [^\n]*device_0[^\n]* again/);
      await stop(d);
    } finally {
      unmount(dev0);
      if (d) kill(d);
    }
  },
});

Deno.test({
  name:
    "a daemon whose disk fills up keeps every row of a busy job and writes them when there is room",
  ignore: MOUNT_SKIP !== undefined,
  async fn() {
    const out = tempDir();
    const dev0 = `${out}/device_0`;
    Deno.mkdirSync(dev0);
    mountTmpfs(dev0, "size=64k");
    let d: Spawned | undefined;
    try {
      d = await startDaemonProcess(out);
      const r = await runWith(out, [], [workload("bench_ring"), "100000"]);
      assert.equal(r.code, 0, r.stderr);
      const [p] = await problems(out);
      assert.match(p.error, /No space left on device/);
      remount(dev0, "size=64m");
      await eventually(async () =>
        (await problems(out)).length === 0 || undefined
      );
      const rows = logRows(dev0);
      assert.equal(rows[0][0], "1");
      assert.equal(rows.filter((r) => r[1] === "MALLOC").length, 50000);
      assert.equal(rows.at(-1)![2], "PROC_EXIT");
      await stop(d);
    } finally {
      unmount(dev0);
      if (d) kill(d);
    }
  },
});

Deno.test({
  name:
    "a daemon whose dump directory turns read-only during a watch still prints the verdict and writes the checksums and report later",
  ignore: MOUNT_SKIP !== undefined,
  async fn() {
    const out = tempDir();
    const dumps = `${out}/watch_dump`;
    Deno.mkdirSync(dumps, { mode: 0o700 });
    mountTmpfs(dumps, "size=4m,mode=0700");
    let d: Spawned | undefined;
    try {
      d = await startDaemonProcess(out);
      remount(dumps, "ro");
      const r = await runWith(out, ["--watch=Fill:0,Add"], [workload("stomp")]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /STOMPED by Copy #1/);
      const files = (await problems(out)).map((p) => p.file);
      assert.ok(
        files.some((f) => /watch_dump_data_check_sum_0_\d{14}\.csv$/.test(f)),
        files.join(),
      );
      assert.ok(files.some((f) => f.endsWith("/watch_report.json")));
      remount(dumps, "rw");
      await eventually(async () =>
        (await problems(out)).length === 0 || undefined
      );
      assert.ok(checksumRows(dumps).length > 0);
      const report: WatchReport = JSON.parse(
        Deno.readTextFileSync(`${dumps}/watch_report.json`),
      );
      assert.deepEqual(report.watches.map((w) => w.stomp), [false, true]);
      await stop(d);
    } finally {
      unmount(dumps);
      if (d) kill(d);
    }
  },
});

Deno.test("a daemon whose log directory is removed makes it again for the next job's rows", async () => {
  const out = tempDir();
  const d = await startDaemonProcess(out);
  try {
    const first = await runWith(out, [], [workload("marks")]);
    assert.equal(first.code, 0, first.stderr);
    logRows(`${out}/device_0`);
    Deno.removeSync(`${out}/device_0`, { recursive: true });
    const second = await runWith(out, [], [workload("marks")]);
    assert.equal(second.code, 0, second.stderr);
    const rows = await eventually(() => {
      try {
        const rows = logRows(`${out}/device_0`);
        return rows.at(-1)![2] === "PROC_EXIT" ? rows : undefined;
      } catch {
        return undefined;
      }
    });
    assert.equal(rows[0][2], "PROC_START");
    assert.match(d.stderr, /device_0[^\n]* was removed/);
    assert.deepEqual(await problems(out), []);
    await stop(d);
  } finally {
    kill(d);
  }
});

Deno.test({
  name:
    "full-content samples that cannot be written are counted as dropped while the verdict still comes from their checksums",
  ignore: MOUNT_SKIP !== undefined,
  async fn() {
    const out = tempDir();
    const dumps = `${out}/watch_dump`;
    Deno.mkdirSync(dumps, { mode: 0o700 });
    mountTmpfs(dumps, "size=4m,mode=0700");
    let d: Spawned | undefined;
    try {
      d = await startDaemonProcess(out);
      remount(dumps, "ro");
      const r = await runWith(
        out,
        ["--watch=Fill:0,Add,full-content"],
        [workload("stomp")],
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /STOMPED by Copy #1/);
      const bins = (await problems(out)).find((p) => p.file.endsWith("/*.bin"));
      assert.ok(bins && bins.dropped > 0, JSON.stringify(bins));
      assert.equal(d.stderr.match(/cannot write [^\n]*\*\.bin/g)?.length, 1);
      await stop(d);
    } finally {
      unmount(dumps);
      if (d) kill(d);
    }
  },
});
