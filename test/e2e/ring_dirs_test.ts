/**
 * Ring directories never pile up in /dev/shm: a daemon or `run` removes
 * those of daemons that are gone, a failed start removes what it made, and
 * `run --daemon` refuses a daemon that does not answer before the job runs.
 */
import assert from "node:assert/strict";
import type { DaemonPaths } from "../../daemon/config.ts";
import { removeOrphanedRingDirs, ringRoot } from "../../daemon/ring_dirs.ts";
import {
  closeLock,
  listNames,
  makeLockedRingDir,
  makePrivateDir,
  pidStarted,
  removeRingDir,
} from "../../ffi/bindings.ts";
import {
  startDaemonProcess,
  stompwatch,
  tempDir,
  workload,
} from "./_harness.ts";
import { MOUNT_SKIP, mountTmpfs, unmount } from "./_mounts.ts";

function daemonJson(out: string): DaemonPaths {
  return JSON.parse(Deno.readTextFileSync(`${out}/daemon.json`));
}

// Deno itself will not look into /dev/shm without --allow-all: the
// daemon's own native calls do.
function exists(path: string): boolean {
  const i = path.lastIndexOf("/");
  return listNames(path.slice(0, i), path.slice(i + 1, -1))?.includes(
    path.slice(i + 1),
  ) ?? false;
}

/** Ring directories in /dev/shm made by process `pid`. */
function ringDirsOf(pid: number): string[] {
  return listNames(ringRoot(), `stompwatch.${pid}.`) ?? [];
}

async function killed(out: string): Promise<DaemonPaths> {
  const d = await startDaemonProcess(out);
  const paths = daemonJson(out);
  d.child.kill("SIGKILL");
  await d.done;
  assert.ok(exists(paths.ringDir), "a killed daemon cannot clean up");
  return paths;
}

Deno.test("a new daemon removes the ring directory of a SIGKILLed daemon and keeps a live one's", async () => {
  const dead = await killed(tempDir());
  const live = await startDaemonProcess(tempDir());
  try {
    const out = tempDir();
    const d = await startDaemonProcess(out);
    assert.ok(!exists(dead.ringDir), dead.ringDir);
    assert.ok(exists(daemonJson(out).ringDir));
    assert.equal(ringDirsOf(live.child.pid).length, 1, "a live daemon's stays");
    d.child.kill("SIGTERM");
    await d.done;
  } finally {
    live.child.kill("SIGTERM");
    await live.done;
  }
});

Deno.test("removeOrphanedRingDirs keeps the directory of a live pid with its start time and removes one of a reused pid", () => {
  const mine = `${ringRoot()}/stompwatch.${Deno.pid}.${
    pidStarted(Deno.pid)
  }.0badc0de`;
  const reused = `${ringRoot()}/stompwatch.${Deno.pid}.1.0badc0de`;
  assert.ok(makePrivateDir(mine) && makePrivateDir(reused));
  try {
    const removed = removeOrphanedRingDirs();
    assert.ok(removed.includes(reused));
    assert.ok(!exists(reused));
    assert.ok(exists(mine));
  } finally {
    removeRingDir(mine);
  }
});

Deno.test("run removes the ring directory of a SIGKILLed daemon", async () => {
  const dead = await killed(tempDir());
  const r = await stompwatch(["run", "--output", tempDir(), "--", "true"]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!exists(dead.ringDir));
});

Deno.test("run --daemon with a killed daemon says so and exits 2 before starting the job", async () => {
  const out = tempDir();
  const dead = await killed(out);
  const marker = `${tempDir()}/job_ran`;
  const r = await stompwatch([
    "run",
    "--daemon",
    `${out}/stompwatch.sock`,
    "--",
    "touch",
    marker,
  ]);
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /^stompwatch: No daemon answers at .*stompwatch\.sock: start one with/,
  );
  assert.ok(!exists(marker), "the job did not run");
  assert.ok(!exists(dead.ringDir), "and left no ring in the dead directory");
});

Deno.test("a daemon that cannot listen on its port leaves no ring directory, token or socket", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const out = tempDir();
  try {
    const port = (taken.addr as Deno.NetAddr).port;
    const d = new Deno.Command(
      new URL("../../stompwatch", import.meta.url).pathname,
      {
        args: ["daemon", "--output", out, "--listen", `127.0.0.1:${port}`],
        stdout: "piped",
        stderr: "piped",
      },
    ).spawn();
    const r = await d.output();
    const stderr = new TextDecoder().decode(r.stderr);
    assert.equal(r.code, 2, stderr);
    assert.match(
      stderr,
      /Cannot listen on 127\.0\.0\.1:\d+: the port is in use/,
    );
    assert.deepEqual(ringDirsOf(d.pid), []);
    assert.deepEqual([...Deno.readDirSync(out)].map((e) => e.name), []);
  } finally {
    taken.close();
  }
});

Deno.test("a daemon started on an output directory already served leaves no ring directory", async () => {
  const out = tempDir();
  const first = await startDaemonProcess(out);
  try {
    const d = new Deno.Command(
      new URL("../../stompwatch", import.meta.url).pathname,
      { args: ["daemon", "--output", out], stdout: "piped", stderr: "piped" },
    ).spawn();
    const r = await d.output();
    assert.equal(r.code, 2);
    assert.match(
      new TextDecoder().decode(r.stderr),
      /A daemon is already listening/,
    );
    assert.deepEqual(ringDirsOf(d.pid), []);
    const job = await stompwatch([
      "run",
      "--daemon",
      `${out}/stompwatch.sock`,
      "--",
      workload("marks"),
    ]);
    assert.equal(job.code, 0, "the first daemon still serves");
  } finally {
    first.child.kill("SIGTERM");
    await first.done;
  }
});

Deno.test({
  name:
    "a daemon on a read-only output directory says so in one line and leaves no ring directory",
  ignore: MOUNT_SKIP !== undefined,
  async fn() {
    const out = tempDir();
    mountTmpfs(out, "ro,size=64k,mode=0700");
    try {
      const d = new Deno.Command(
        new URL("../../stompwatch", import.meta.url).pathname,
        { args: ["daemon", "--output", out], stdout: "piped", stderr: "piped" },
      ).spawn();
      const r = await d.output();
      const stderr = new TextDecoder().decode(r.stderr);
      assert.equal(r.code, 2);
      assert.match(
        stderr,
        /^stompwatch: Cannot create .*: Read-only file system.*; give an --output directory you can write\n$/,
      );
      assert.deepEqual(ringDirsOf(d.pid), []);
    } finally {
      unmount(out);
    }
  },
});

/** A directory holding two files, for a planted link to point at. */
function victim(): string {
  const dir = tempDir();
  Deno.writeTextFileSync(`${dir}/a`, "keep");
  Deno.writeTextFileSync(`${dir}/b`, "keep");
  return dir;
}

function names(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

Deno.test("a symlink named like a dead daemon's ring directory, in /dev/shm or in OUT, is never followed: the files it points at survive", async () => {
  const shmVictim = victim(), outVictim = victim();
  const out = tempDir();
  const shmLink = `${ringRoot()}/stompwatch.999999.1.dead1111`;
  const outLink = `${out}/rings.999999.1.dead2222`;
  Deno.symlinkSync(shmVictim, shmLink);
  Deno.symlinkSync(outVictim, outLink);
  try {
    const r = await stompwatch(["run", "--output", out, "--", "true"]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(names(shmVictim), ["a", "b"]);
    assert.deepEqual(names(outVictim), ["a", "b"]);
  } finally {
    Deno.removeSync(shmLink);
    Deno.removeSync(outLink);
  }
});

Deno.test({
  name: "a ring directory of a dead pid owned by another user is left alone",
  ignore: Deno.uid() !== 0, // only root can make one
  async fn() {
    // In OUT: Deno itself may not write into /dev/shm (the same code decides both).
    const out = tempDir();
    const other = `${out}/rings.999999.1.dead3333`;
    Deno.mkdirSync(other, { mode: 0o700 });
    Deno.writeTextFileSync(`${other}/1.ring`, "theirs");
    Deno.chownSync(`${other}/1.ring`, 65534, 65534);
    Deno.chownSync(other, 65534, 65534);
    const r = await stompwatch(["run", "--output", out, "--", "true"]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(names(other), ["1.ring"]);
  },
});

Deno.test("a ring directory whose lock is held is never removed, though its pid looks dead (another pid namespace)", async () => {
  const live = `${ringRoot()}/stompwatch.999999.1.dead4444`;
  const fd = makeLockedRingDir(live);
  assert.ok(fd !== null);
  try {
    const r = await stompwatch(["run", "--output", tempDir(), "--", "true"]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(exists(live), "its daemon holds the lock");
  } finally {
    closeLock(fd);
    removeRingDir(live);
  }
});

Deno.test("a ring directory whose lock nobody holds is removed, though its pid looks alive (another pid namespace)", async () => {
  const gone = `${ringRoot()}/stompwatch.${Deno.pid}.${
    pidStarted(Deno.pid)
  }.dead5555`;
  const fd = makeLockedRingDir(gone);
  assert.ok(fd !== null);
  closeLock(fd);
  try {
    const r = await stompwatch(["run", "--output", tempDir(), "--", "true"]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!exists(gone));
  } finally {
    removeRingDir(gone);
  }
});

Deno.test("a daemon refused its --output directory leaves the ring directories in it alone", async () => {
  const out = tempDir();
  const old = `${out}/rings.999999.1.dead6666`;
  assert.ok(makePrivateDir(old));
  Deno.writeTextFileSync(`${old}/1.ring`, "kept");
  Deno.chmodSync(out, 0o755);
  const r = await stompwatch(["daemon", "--output", out]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /Cannot use --output .*other users can open it/);
  assert.deepEqual(names(old), ["1.ring"]);
});
