/**
 * Command lines that cannot work are refused in one line, with exit code 2,
 * before anything is made or any job runs untraced.
 */
import assert from "node:assert/strict";
import { startDaemonProcess, stompwatch, tempDir } from "./_harness.ts";

Deno.test("env for a daemon that was killed prints no exports and exits 2", async () => {
  const out = tempDir();
  const d = await startDaemonProcess(out);
  d.child.kill("SIGKILL");
  await d.done;
  const env = await stompwatch(["env", "--output", out]);
  assert.equal(env.code, 2, env.stderr);
  assert.equal(env.stdout, "");
  assert.match(
    env.stderr,
    /^stompwatch: No daemon answers at .*stompwatch\.sock: start one with \.\/stompwatch daemon --output /,
  );
});

Deno.test("an --output whose socket path is too long is refused before anything is made", async () => {
  const parent = tempDir();
  const out = `${parent}/${"x".repeat(200)}`;
  for (const args of [["daemon"], ["run", "--", "true"], ["env"]]) {
    const r = await stompwatch([args[0], "--output", out, ...args.slice(1)]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^stompwatch: Cannot use --output \/.*x: its socket path \/.*\/stompwatch\.sock is \d+ bytes, more than the 107 a Unix socket path may have; use a shorter directory\n$/,
    );
  }
  assert.deepEqual([...Deno.readDirSync(parent)], []);
});

Deno.test("an option given an empty value is refused with the usage", async () => {
  const cwd = tempDir();
  for (
    const args of [
      ["daemon", "--output", ""],
      ["daemon", "--output", `${cwd}/o`, "--listen="],
      ["run", "--output=", "--", "true"],
      ["env", "--watch", ""],
      ["compare", "--input", "a.csv,b.csv", "--level", ""],
    ]
  ) {
    const r = await stompwatch(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(
      r.stderr,
      /^stompwatch: Empty value for --(output|listen|watch|level): give it a value or leave the option out\nusage:/,
    );
  }
  assert.deepEqual([...Deno.readDirSync(cwd)], []);
});
