/**
 * `--listen` through the real launcher: every address parseListen accepts
 * is one the launcher grants, a bad one gets stompwatch's own message, and
 * over TCP without the token GET /health tells nothing but that it is up.
 */
import assert from "node:assert/strict";
import { startDaemonProcess, stompwatch, tempDir } from "./_harness.ts";

function port(): number {
  return 20000 + Math.floor(Math.random() * 20000);
}

Deno.test("the daemon refuses a --listen address with an octet over 255 in its own words, not Deno's", async () => {
  for (const value of ["127.999.1.1:17080", "127.0.0.01:17080"]) {
    const r = await stompwatch([
      "daemon",
      "--output",
      tempDir(),
      "--listen",
      value,
    ]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr,
      `stompwatch: Invalid --listen value: ${value}; use 127.0.0.1:PORT (or another 127.x.y.z, localhost:PORT, [::1]:PORT) with a port from 1 to 65535: the daemon listens on loopback only\n`,
    );
  }
});

Deno.test("the daemon listens on any 127.x.y.z it accepts, given as --listen ADDR or --listen=ADDR", async () => {
  for (const form of ["split", "joined"]) {
    const out = tempDir();
    const address = `127.0.${form === "split" ? 2 : 3}.1:${port()}`;
    const daemon = await startDaemonProcess(
      out,
      form === "split" ? ["--listen", address] : [`--listen=${address}`],
    );
    try {
      const health = await fetch(`http://${address}/health`);
      assert.equal(health.status, 200);
      // Without the token: that it is up, not where its files are.
      assert.deepEqual(await health.json(), { ok: true });
      const token = Deno.readTextFileSync(`${out}/token`).trim();
      const full = await fetch(`http://${address}/health`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal((await full.json()).outputDir, out);
    } finally {
      daemon.child.kill("SIGTERM");
      await daemon.done;
    }
    assert.doesNotMatch(daemon.stderr, /allow-net|--allow/);
  }
});
