import assert from "node:assert/strict";
import {
  startDaemonProcess,
  STOMPWATCH,
  tempDir,
  workload,
} from "./_harness.ts";

Deno.test("run --daemon OUT/stompwatch.sock given relative to another cwd reaches that daemon", async () => {
  const parent = tempDir();
  const d = await startDaemonProcess(`${parent}/out`);
  try {
    const r = await new Deno.Command(STOMPWATCH, {
      args: ["run", "--daemon", "out/stompwatch.sock", "--", workload("marks")],
      cwd: parent,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(r.stderr);
    assert.equal(r.code, 0, stderr);
    assert.match(
      stderr,
      new RegExp(`dumps and watch_report\\.json in ${parent}/out/watch_dump`),
    );
  } finally {
    d.child.kill("SIGTERM");
    await d.done;
  }
});
