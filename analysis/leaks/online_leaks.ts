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
import {
  type AllocEvent,
  type FreeEvent,
  type Pool,
  POOL_CODE,
  POOLS,
  type TracedEvent,
} from "../events.ts";
import { LiveBlocks } from "../live_blocks.ts";
import { PoolUsage } from "../pool_usage.ts";

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

/**
 * The running analysis of one process. It holds the process's live blocks
 * too, so the daemon keeps one table per process: it places watches with
 * it, and completes the events it hands on (see {@linkcode track}).
 *
 * @example
 * ```ts
 * import { OnlineLeaks } from "./online_leaks.ts";
 * const leaks = new OnlineLeaks(1);
 * leaks.track({ kind: "range_start", id: 1, message: "step start", pid: 1, tid: 1, ts: 0, device: 0 });
 * leaks.suspects(); // []
 * ```
 */
export class OnlineLeaks {
  readonly pid: number;
  /** The process's live blocks. */
  readonly live = new LiveBlocks();
  /** Current step, 0 before the first. */
  step = 0;
  #inStep = false;
  #stepRanges = new Set<number>();
  #kernels = 0;
  #allocations = 0;
  #suspects = new Map<number, LeakSuspect>();
  #usage = new PoolUsage();
  /** This step's fluctuation so far. */
  #current: StepFluctuation[] = [];
  #fluctuation: StepFluctuation[] = [];
  /** Told of each new suspect as it is found (the daemon logs it). */
  onSuspect: (s: LeakSuspect) => void = () => {};

  /** The analysis of process `pid`. */
  constructor(pid: number) {
    this.pid = pid;
  }

  /**
   * Takes the process's next event and completes it: a successful
   * allocation gets its `allocationId`, a free the `size` and
   * `allocationId` of the block it frees (0 when the block was never seen).
   */
  track(e: TracedEvent): void {
    switch (e.kind) {
      case "op":
        this.launched();
        return;
      case "alloc":
        this.allocated(e);
        return;
      case "free":
        this.freed(e);
        return;
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

  /** An op launch ({@linkcode track} for one kind): blocks are stamped with the launches before them. */
  launched(): void {
    this.#kernels++;
  }

  /**
   * An allocation ({@linkcode track} for one kind): a successful one gets
   * its `allocationId`. Called directly on the daemon's hot path, so that
   * it only ever sees allocation events.
   */
  allocated(e: AllocEvent): void {
    e.allocationId = 0;
    if (e.result !== 0 || e.addr === 0) return;
    const live = this.live, row = live.insert(e.addr, e.size);
    const pool = POOL_CODE[e.pool];
    live.device[row] = e.device;
    live.pool[row] = pool;
    live.allocationId[row] = e.allocationId = ++this.#allocations;
    live.step[row] = this.#inStep ? this.step : this.step + 1;
    live.kernel[row] = this.#kernels;
    live.ts[row] = e.ts;
    this.#account(e.device, pool, e.size);
  }

  /**
   * A free ({@linkcode track} for one kind): it gets the `size` and
   * `allocationId` of the block it frees (0 when the block was never seen).
   */
  freed(e: FreeEvent): void {
    const live = this.live, row = e.result === 0 ? live.take(e.addr) : -1;
    if (row < 0) {
      e.size = e.allocationId = 0;
      return;
    }
    e.size = live.size[row];
    e.allocationId = live.allocationId[row];
    // Freed within a step, the block was the training loop's to free;
    // freed outside any (teardown after the last step) it stays a leak.
    if (this.#inStep) this.#suspects.delete(e.addr);
    this.#account(live.device[row], live.pool[row], -e.size);
  }

  /** Blocks suspected so far and not cleared. */
  suspects(): LeakSuspect[] {
    return [...this.#suspects.values()];
  }

  /** Every finished step's fluctuation (steps 0 and 1 skipped). */
  fluctuation(): StepFluctuation[] {
    return [...this.#fluctuation];
  }

  // Runs on every allocation and free.
  #account(device: number, pool: number, delta: number): void {
    const used = this.#usage.add(device, pool, delta);
    if (this.#inStep && this.step >= 2) this.#fluctuate(device, pool, used);
  }

  // Kept out of #account so that the hot part stays small enough to inline.
  #fluctuate(device: number, pool: number, used: number): void {
    const peak = this.#usage.peak(device, pool);
    if (peak === 0) return;
    const ratio = used / peak;
    const key = (device + 1) * POOLS.length + pool;
    const f = this.#current[key] ??= {
      step: this.step,
      device,
      pool: POOLS[pool],
      minRatio: ratio,
      maxRatio: ratio,
      minAllocatedBytes: used,
      maxAllocatedBytes: used,
    };
    f.minRatio = Math.min(f.minRatio, ratio);
    f.maxRatio = Math.max(f.maxRatio, ratio);
    f.minAllocatedBytes = Math.min(f.minAllocatedBytes, used);
    f.maxAllocatedBytes = Math.max(f.maxAllocatedBytes, used);
  }

  #endStep(): void {
    this.#inStep = false;
    const live = this.live;
    for (const row of live.rows()) {
      const step = live.step[row], addr = live.addr[row];
      if (step < 2 || step >= this.step || this.#suspects.has(addr)) continue;
      const { size, ...block } = live.block(row);
      const s: LeakSuspect = { pid: this.pid, ...block, bytes: size };
      this.#suspects.set(addr, s);
      this.onSuspect(s);
    }
    for (const f of this.#current) if (f) this.#fluctuation.push(f);
    this.#current = [];
  }
}

function mb(bytes: number): string {
  return (bytes / 1048576).toFixed(2);
}

/** C's `%f`: six decimals. */
function cFixed(x: number): string {
  return x.toFixed(6);
}

/**
 * A double as C++'s `std::cout <<` writes it by default (`%g`: six
 * significant digits, trailing zeros dropped, exponent past 1e6 or
 * below 1e-4).
 */
function cGeneral(x: number): string {
  if (x === 0) return "0";
  const [mant, expText] = x.toExponential(5).split("e");
  const exp = Number(expText);
  const trim = (t: string) => t.includes(".") ? t.replace(/\.?0+$/, "") : t;
  if (exp < -4 || exp >= 6) {
    const e = String(Math.abs(exp)).padStart(2, "0");
    return `${trim(mant)}e${exp < 0 ? "-" : "+"}${e}`;
  }
  return trim(x.toFixed(5 - exp));
}

/**
 * The real tool's lines for leaks found at exit, device by device, as its
 * step analyser prints them: the leak lines with `%f` MB, then the device's
 * SUMMARY, whose total goes through `std::cout` (`%g`).
 *
 * @example
 * ```ts
 * import { formatLeakSummary } from "./online_leaks.ts";
 * formatLeakSummary([]); // []
 * ```
 */
export function formatLeakSummary(suspects: LeakSuspect[]): string[] {
  const lines: string[] = [];
  const devices = [...new Set(suspects.map((s) => s.device))].sort((a, b) =>
    a - b
  );
  for (const d of devices) {
    const mine = suspects.filter((s) => s.device === d);
    lines.push(`====== ERROR: Detected memory leaks on device ${d} ======`);
    for (const s of mine) {
      lines.push(
        `Direct ${s.pool} leak of ${cFixed(s.bytes / 1048576)} Mb(s) at 0x${
          s.addr.toString(16)
        } in kernel_${s.kernel} at step ${s.step}.`,
      );
    }
    const total = mine.reduce((n, s) => n + s.bytes, 0);
    lines.push(
      `====== SUMMARY: ${
        cGeneral(total / 1048576)
      } Mb(s) leaked in ${mine.length} allocation(s) ======`,
    );
  }
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
