/**
 * Leak and fluctuation analysis while a job runs (SPEC section 4), fed the
 * job's events in order. Steps are the ranges whose message is exactly
 * `step start`; a step ends at its range's end (or when the next one
 * starts).
 *
 * - Leaks: at each step end, a live block allocated after step 1 that has
 *   lived through at least one step end since is a suspect (warned once).
 *   A suspect freed within a later step is cleared; one freed outside any
 *   step (the teardown after the last) stays, or every leak would vanish
 *   when the job cleans up. At exit the suspects left are the leaks.
 * - Fluctuation: per device and pool, the lowest and highest ratio of
 *   allocated to reserved bytes within each step from step 2 on. Runtime
 *   (HAL) allocations have no caching pool, so their "reserved" is the
 *   process's high-water mark on that device, which is what a caching
 *   allocator would be holding.
 *
 * @module
 */
import type { Pool, TracedEvent } from "./events.ts";

/** The range message that delimits steps, as in the real tool. */
export const STEP_MESSAGE = "step start";

/** A block suspected of leaking. */
export interface LeakSuspect {
  pid: number;
  device: number;
  pool: Pool;
  addr: number;
  bytes: number;
  allocationId: number;
  /** Step it was allocated in. */
  step: number;
  /** Op launches of the process before its allocation. */
  kernel: number;
  ts: number;
}

/** Allocated/reserved ratio of one pool over one step. */
export interface StepFluctuation {
  step: number;
  device: number;
  pool: Pool;
  minRatio: number;
  maxRatio: number;
  minAllocatedBytes: number;
  maxAllocatedBytes: number;
}

interface Block {
  device: number;
  pool: Pool;
  bytes: number;
  allocationId: number;
  step: number;
  kernel: number;
  ts: number;
}

interface PoolState {
  used: number;
  peak: number;
  current?: StepFluctuation;
}

/**
 * The running analysis of one process.
 *
 * @example
 * ```ts
 * import { OnlineLeaks } from "./online_leaks.ts";
 * const leaks = new OnlineLeaks(1);
 * leaks.onEvent({ kind: "range_start", id: 1, message: "step start", pid: 1, tid: 1, ts: 0, device: 0 });
 * leaks.suspects(); // []
 * ```
 */
export class OnlineLeaks {
  readonly pid: number;
  /** Current step, 0 before the first. */
  step = 0;
  #inStep = false;
  #stepRanges = new Set<number>();
  #kernels = 0;
  #live = new Map<number, Block>();
  #suspects = new Map<number, LeakSuspect>();
  #pools = new Map<string, PoolState>();
  #fluctuation: StepFluctuation[] = [];
  /** Told of each new suspect as it is found (the daemon logs it). */
  onSuspect: (s: LeakSuspect) => void = () => {};

  /** The analysis of process `pid`. */
  constructor(pid: number) {
    this.pid = pid;
  }

  /** Takes the process's next event. */
  onEvent(e: TracedEvent): void {
    switch (e.kind) {
      case "op":
        this.#kernels++;
        return;
      case "alloc":
        if (e.result !== 0) return;
        this.#live.set(e.addr, {
          device: e.device,
          pool: e.pool,
          bytes: e.size,
          allocationId: e.allocationId,
          step: this.#inStep ? this.step : this.step + 1,
          kernel: this.#kernels,
          ts: e.ts,
        });
        this.#account(e.device, e.pool, e.size);
        return;
      case "free": {
        const block = this.#live.get(e.addr);
        if (e.result !== 0 || !block) return;
        this.#live.delete(e.addr);
        // Freed within a step, the block was the training loop's to free;
        // freed outside any (teardown after the last step) it stays a leak.
        if (this.#inStep) this.#suspects.delete(e.addr);
        this.#account(block.device, block.pool, -block.bytes);
        return;
      }
      case "range_start":
        if (e.message !== STEP_MESSAGE) return;
        if (this.#inStep) this.#endStep();
        this.#stepRanges.add(e.id);
        this.step++;
        this.#inStep = true;
        return;
      case "range_end":
        if (this.#stepRanges.delete(e.id) && this.#inStep) this.#endStep();
        return;
      default:
        return;
    }
  }

  /** Blocks suspected so far and not cleared. */
  suspects(): LeakSuspect[] {
    return [...this.#suspects.values()];
  }

  /** Every finished step's fluctuation (steps 0 and 1 skipped). */
  fluctuation(): StepFluctuation[] {
    return [...this.#fluctuation];
  }

  #account(device: number, pool: Pool, delta: number): void {
    const key = `${device}:${pool}`;
    let s = this.#pools.get(key);
    if (!s) this.#pools.set(key, s = { used: 0, peak: 0 });
    s.used += delta;
    if (s.used > s.peak) s.peak = s.used;
    if (!this.#inStep || this.step < 2 || s.peak === 0) return;
    const ratio = s.used / s.peak;
    const f = s.current ??= {
      step: this.step,
      device,
      pool,
      minRatio: ratio,
      maxRatio: ratio,
      minAllocatedBytes: s.used,
      maxAllocatedBytes: s.used,
    };
    f.minRatio = Math.min(f.minRatio, ratio);
    f.maxRatio = Math.max(f.maxRatio, ratio);
    f.minAllocatedBytes = Math.min(f.minAllocatedBytes, s.used);
    f.maxAllocatedBytes = Math.max(f.maxAllocatedBytes, s.used);
  }

  #endStep(): void {
    this.#inStep = false;
    for (const [addr, b] of this.#live) {
      if (b.step < 2 || b.step >= this.step || this.#suspects.has(addr)) {
        continue;
      }
      const s: LeakSuspect = { pid: this.pid, addr, ...b };
      this.#suspects.set(addr, s);
      this.onSuspect(s);
    }
    for (const s of this.#pools.values()) {
      if (s.current) this.#fluctuation.push(s.current);
      s.current = undefined;
    }
  }
}

function mb(bytes: number): string {
  return (bytes / 1048576).toFixed(2);
}

/**
 * The real tool's lines for leaks found at exit.
 *
 * @example
 * ```ts
 * import { formatLeakSummary } from "./online_leaks.ts";
 * formatLeakSummary([]); // []
 * ```
 */
export function formatLeakSummary(suspects: LeakSuspect[]): string[] {
  if (suspects.length === 0) return [];
  const lines: string[] = [];
  const devices = [...new Set(suspects.map((s) => s.device))].sort((a, b) =>
    a - b
  );
  for (const d of devices) {
    lines.push(`====== ERROR: Detected memory leaks on device ${d} ======`);
    for (const s of suspects.filter((s) => s.device === d)) {
      lines.push(
        `Direct ${s.pool} leak of ${mb(s.bytes)} Mb(s) at 0x${
          s.addr.toString(16)
        } in kernel_${s.kernel} at step ${s.step}.`,
      );
    }
  }
  const total = suspects.reduce((n, s) => n + s.bytes, 0);
  lines.push(
    `====== SUMMARY: ${
      mb(total)
    } Mb(s) leaked in ${suspects.length} allocation(s) ======`,
  );
  return lines;
}

/**
 * One line per pool and step.
 *
 * @example
 * ```ts
 * import { formatFluctuation } from "./online_leaks.ts";
 * formatFluctuation([]); // []
 * ```
 */
export function formatFluctuation(steps: StepFluctuation[]): string[] {
  return steps.map((f) =>
    `Memory fluctuation on device ${f.device} (${f.pool}) at step ${f.step}: allocated/reserved ratio min ${
      f.minRatio.toFixed(3)
    } max ${f.maxRatio.toFixed(3)}, least allocated ${
      mb(f.minAllocatedBytes)
    } Mb(s)`
  );
}
