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

/** [pid, process group] of `pid` itself, or of its children. */
async function groups(
  which: "-p" | "--ppid",
  pid: number,
): Promise<number[][]> {
  const r = await new Deno.Command("ps", {
    args: ["-o", "pid=,pgid=", which, String(pid)],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(r.stdout).trim().split("\n").map((l) =>
    l.trim().split(/\s+/).map(Number)
  );
}

Deno.test("the guardian runs in its own process group, so a Ctrl-C to the daemon's group never reaches it", async () => {
  const d = await startDaemonProcess(tempDir());
  try {
    const pid = d.child.pid;
    const [[guardian, guardianGroup]] = await groups("--ppid", pid);
    const [[, daemonGroup]] = await groups("-p", pid);
    assert.ok(guardian > 0, "the daemon has its guardian");
    assert.notEqual(guardianGroup, daemonGroup);
  } finally {
    d.child.kill("SIGTERM");
    await d.done;
  }
  assert.doesNotMatch(d.stderr, /guardian .* stopped/);
});
