/**
 * main.ts's last line of defence: an error that reaches the top ends the
 * command with one stompwatch line, never Deno's own advice about flags.
 */
import assert from "node:assert/strict";

const root = new URL("../", import.meta.url).pathname;

Deno.test("a permission the command was not granted ends in one stompwatch line, not Deno's --allow advice", async () => {
  const out = Deno.makeTempDirSync({ prefix: "stompwatch_test_" });
  // Read only: the daemon cannot create its directories.
  const r = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      `--allow-read`,
      "--allow-env",
      "--allow-ffi",
      `${root}main.ts`,
      "daemon",
      "--output",
      `${out}/sub`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(r.stderr);
  assert.equal(r.code, 2, stderr);
  assert.match(
    stderr,
    /^stompwatch: Cannot go on: this command is not allowed write access to .*sub.*; \.\/stompwatch grants each command only the files and loopback addresses named on its command line, so check those\n$/,
  );
  assert.doesNotMatch(stderr, /--allow|run again/);
});
