import assert from "node:assert/strict";
import { startDaemonProcess, stompwatch, tempDir } from "./_harness.ts";

Deno.test("eval of stompwatch env sets exactly the --watch value given, expanding nothing in it", async () => {
  const out = tempDir();
  const cwd = tempDir();
  const d = await startDaemonProcess(out);
  try {
    const watch = `a$(touch r)\`touch r\`$HOME"'\\:0,b'c`;
    const env = await stompwatch(["env", "--output", out, "--watch", watch]);
    assert.equal(env.code, 0, env.stderr);
    const shell = await new Deno.Command("bash", {
      args: [
        "-c",
        'LD_PRELOAD=/x.so; eval "$0"; printf "%s\\n%s" "$STOMPWATCH_WATCH" "$LD_PRELOAD"',
        env.stdout,
      ],
      cwd,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const [got, preload] = new TextDecoder().decode(shell.stdout).split("\n");
    assert.equal(got, watch, new TextDecoder().decode(shell.stderr));
    assert.match(preload, /libstompwatch_hook\.so:\/x\.so$/);
    assert.deepEqual([...Deno.readDirSync(cwd)], [], "no command in it ran");
  } finally {
    d.child.kill("SIGTERM");
    await d.done;
  }
});
