import assert from "node:assert/strict";
import type { TracedEvent } from "../../../analysis/events.ts";
import {
  formatLeakSummary,
  OnlineLeaks,
  STEP_MESSAGE,
} from "../../../analysis/leaks/mod.ts";

const b = { pid: 1, tid: 1, ts: 0, device: 0 };
let nextRange = 1;
const start = (): TracedEvent => ({
  ...b,
  kind: "range_start",
  id: nextRange,
  message: STEP_MESSAGE,
});
const end = (): TracedEvent => ({ ...b, kind: "range_end", id: nextRange++ });
const alloc = (addr: number, size = 1 << 20): TracedEvent => ({
  ...b,
  kind: "alloc",
  addr,
  size,
  pool: "HAL",
  result: 0,
  allocationId: addr,
});
const free = (addr: number): TracedEvent => ({
  ...b,
  kind: "free",
  addr,
  pool: "HAL",
  result: 0,
  size: 0,
  allocationId: addr,
});

function feed(events: TracedEvent[]): OnlineLeaks {
  const o = new OnlineLeaks(1);
  for (const e of events) o.track(e);
  return o;
}

Deno.test("online leaks warn of a block allocated in step 2 and live at the end of step 3", () => {
  const o = feed([
    start(),
    end(),
    start(),
    alloc(0x100),
    end(),
    start(),
    end(),
  ]);
  assert.deepEqual(o.suspects().map((s) => [s.addr, s.step]), [[0x100, 2]]);
});

Deno.test("online leaks ignore blocks of step 1 and blocks freed within a later step", () => {
  const o = feed([
    start(),
    alloc(0x100),
    end(),
    start(),
    alloc(0x200),
    end(),
    start(),
    free(0x200),
    end(),
  ]);
  assert.deepEqual(o.suspects(), []);
});

Deno.test("online leaks keep a suspect freed only after the last step (teardown)", () => {
  const o = feed([
    start(),
    end(),
    start(),
    alloc(0x100),
    end(),
    start(),
    end(),
    free(0x100),
  ]);
  assert.equal(o.suspects().length, 1);
  assert.deepEqual(formatLeakSummary(o.suspects()), [
    "====== ERROR: Detected memory leaks on device 0 ======",
    "Direct HAL leak of 1.000000 Mb(s) at 0x100 in kernel_0 at step 2.",
    "====== SUMMARY: 1 Mb(s) leaked in 1 allocation(s) ======",
  ]);
});

Deno.test("the leak summary prints sizes as msMemScope's printf (%f) and its SUMMARY as std::cout (%g), per device", () => {
  const MB = 1048576;
  const suspect = (device: number, addr: number, bytes: number) => ({
    pid: 1,
    device,
    pool: "HAL" as const,
    addr,
    bytes,
    allocationId: 1,
    step: 2,
    kernel: 7,
    ts: 0,
  });
  assert.deepEqual(
    formatLeakSummary([
      suspect(1, 0x2000, 2),
      suspect(0, 0x1000, 1.5 * MB),
      suspect(0, 0x3000, 2.314697265625 * MB),
      suspect(1, 0x4000, 1234567 * MB),
    ]),
    [
      "====== ERROR: Detected memory leaks on device 0 ======",
      "Direct HAL leak of 1.500000 Mb(s) at 0x1000 in kernel_7 at step 2.",
      "Direct HAL leak of 2.314697 Mb(s) at 0x3000 in kernel_7 at step 2.",
      "====== SUMMARY: 3.8147 Mb(s) leaked in 2 allocation(s) ======",
      "====== ERROR: Detected memory leaks on device 1 ======",
      "Direct HAL leak of 0.000002 Mb(s) at 0x2000 in kernel_7 at step 2.",
      "Direct HAL leak of 1234567.000000 Mb(s) at 0x4000 in kernel_7 at step 2.",
      "====== SUMMARY: 1.23457e+06 Mb(s) leaked in 2 allocation(s) ======",
    ],
  );
});

Deno.test("online leaks do not warn of a block that has not yet lived through a step end", () => {
  const o = feed([
    start(),
    end(),
    start(),
    end(),
    start(),
    alloc(0x100),
    end(),
  ]);
  assert.deepEqual(o.suspects(), []);
});

Deno.test("a new step start ends the step left open", () => {
  const o = feed([start(), start(), alloc(0x100), start(), start()]);
  assert.equal(o.step, 4);
  assert.equal(o.suspects().length, 1);
});

Deno.test("fluctuation skips steps 0 and 1 and gives min and max allocated/reserved per step", () => {
  const o = feed([
    start(),
    alloc(0x100, 100),
    end(),
    start(),
    alloc(0x200, 100),
    free(0x200),
    end(),
  ]);
  assert.deepEqual(o.fluctuation(), [{
    step: 2,
    device: 0,
    pool: "HAL",
    minRatio: 0.5,
    maxRatio: 1,
    minAllocatedBytes: 100,
    maxAllocatedBytes: 200,
  }]);
});
