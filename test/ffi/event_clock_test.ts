import assert from "node:assert/strict";
import { daemonLibrary } from "../../ffi/bindings.ts";

Deno.test("the event clock keeps to CLOCK_REALTIME across a re-anchor and never steps back by more than 10 µs", async () => {
  const native = daemonLibrary();
  const event = () => Number(native.stompwatch_event_ns());
  const real = () => Number(native.stompwatch_now_ns());
  event(); // the first stamp calibrates
  let last = event(), worstDrift = 0, worstStep = 0;
  const until = Date.now() + 1300; // past the one-second re-anchor
  while (Date.now() < until) {
    const before = real(), t = event(), after = real();
    // Each stamp lies between two real readings, give or take the drift.
    worstDrift = Math.max(worstDrift, before - t, t - after);
    worstStep = Math.max(worstStep, last - t);
    last = t;
    await new Promise((r) => setTimeout(r, 1));
  }
  assert.ok(worstDrift < 100_000, `event clock strays ${worstDrift} ns`);
  assert.ok(worstStep <= 10_000, `event clock ran back ${worstStep} ns`);
});
