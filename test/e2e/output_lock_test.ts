/**
 * One daemon per output directory, settled by the live daemon's lock on
 * `OUT/daemon.lock`, not by whether its socket answers; and the guardian
 * beside it outlives a Ctrl-C to the daemon's process group.
 */
import assert from "node:assert/strict";
import {
  requestSocket,
  Spawned,
  startDaemonProcess,
  STOMPWATCH,
  tempDir,
} from "./_harness.ts";

Deno.test("a second daemon on an output directory whose live daemon's socket is gone is refused and touches nothing", async () => {
  const out = tempDir();
  const first = await startDaemonProcess(out);
  try {
    // Gone (or not answering, as a busy daemon may): the directory is still served.
    Deno.removeSync(`${out}/stompwatch.sock`);
    const json = Deno.readTextFileSync(`${out}/daemon.json`);
    const second = new Spawned(STOMPWATCH, ["daemon", "--output", out]);
    const started = await Promise.race([
      second.done.then(() => false),
      second.line(/listening on/, 60_000).then(() => true),
    ]);
    if (started) second.child.kill("SIGTERM");
    const status = await second.done;
    assert.equal(started, false, "the second daemon started over the first");
    assert.equal(status.code, 2, second.stderr);
    assert.match(
      second.stderr,
      /^stompwatch: A daemon is already listening on .*stompwatch\.sock \(it holds .*daemon\.lock\): use it/,
    );
    assert.equal(Deno.readTextFileSync(`${out}/daemon.json`), json);
    assert.ok(
      !Deno.readDirSync(out).some((e) => e.name === "stompwatch.sock"),
      "it made no socket of its own",
    );
  } finally {
    first.child.kill("SIGTERM");
    await first.done;
  }
  // Stopped, the first daemon leaves the directory to the next one.
  assert.ok(!Deno.readDirSync(out).some((e) => e.name === "daemon.lock"));
  const next = await startDaemonProcess(out);
  assert.equal(
    (await requestSocket(`${out}/stompwatch.sock`, "GET", "/health")).status,
    200,
  );
  next.child.kill("SIGTERM");
  await next.done;
});

function processGroup(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
}

Deno.test("the guardian runs in its own process group, so a Ctrl-C to the daemon's group never reaches it", async () => {
  const d = await startDaemonProcess(tempDir());
  try {
    const pid = d.child.pid;
    const [guardian] = Deno.readTextFileSync(
      `/proc/${pid}/task/${pid}/children`,
    ).trim().split(" ").map(Number);
    assert.ok(guardian > 0, "the daemon has its guardian");
    assert.notEqual(processGroup(guardian), processGroup(pid));
  } finally {
    d.child.kill("SIGTERM");
    await d.done;
  }
  assert.doesNotMatch(d.stderr, /guardian .* stopped/);
});
