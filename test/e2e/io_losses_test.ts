/**
 * What a daemon could not write is said when it stops, per file: GET
 * /health counted it while the daemon ran, and no one can ask it after.
 */
import assert from "node:assert/strict";
import type { IoProblem } from "../../watch/io_problems.ts";
import {
  requestSocket,
  type Spawned,
  startDaemonProcess,
  stompwatch,
  tempDir,
  workload,
} from "./_harness.ts";
import { MOUNT_SKIP, mountTmpfs, unmount } from "./_mounts.ts";

Deno.test({
  name:
    "a daemon stopped while its log is read-only says on stderr how many rows and bytes that log lost",
  ignore: MOUNT_SKIP !== undefined,
  async fn() {
    const out = tempDir();
    const dev0 = `${out}/device_0`;
    Deno.mkdirSync(dev0);
    mountTmpfs(dev0, "ro,size=1m");
    let d: Spawned | undefined;
    try {
      d = await startDaemonProcess(out);
      const socket = `${out}/stompwatch.sock`;
      const r = await stompwatch(
        ["run", "--daemon", socket, "--", workload("marks")],
      );
      assert.equal(r.code, 0, r.stderr);
      const health = await requestSocket(socket, "GET", "/health");
      const [p] = (health.body as { ioProblems: IoProblem[] }).ioProblems;
      assert.ok(p.keptBytes > 0);
      d.child.kill("SIGTERM");
      assert.equal((await d.done).code, 0, d.stderr);
      const m = new RegExp(
        `stompwatch: ${p.file} lacks (\\d+) rows \\((\\d+) bytes\\) that could not be written and are lost\\n`,
      ).exec(d.stderr);
      assert.ok(m, d.stderr);
      assert.ok(Number(m[1]) > 0);
      assert.equal(Number(m[2]), p.keptBytes);
    } finally {
      unmount(dev0);
      try {
        d?.child.kill("SIGKILL");
      } catch { /* stopped already */ }
    }
  },
});
