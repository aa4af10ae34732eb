/**
 * Runs benchmark workloads as real traced jobs of an in-process daemon, and
 * times them up to the moment the daemon has written out all they sent.
 *
 * @module
 */
import { jobEnv } from "../daemon/config.ts";
import type { Daemon } from "../daemon/daemon.ts";

const root = new URL("../", import.meta.url).pathname;

/** A workload binary built by make -C ffi. */
export function workload(name: string): string {
  return `${root}ffi/build/testing/workloads/${name}`;
}

/** What a job printed and how long it took, to exit and to be fully drained. */
export interface JobTiming {
  stdout: string;
  exitMs: number;
  drainedMs: number;
}

/** Reads `key value` lines from a workload's output. */
export function figure(stdout: string, key: string): number {
  const m = new RegExp(`^${key} ([\\d.]+)$`, "m").exec(stdout);
  if (!m) throw new Error(`Workload printed no ${key}: ${stdout}`);
  return Number(m[1]);
}

/** Runs `cmd` traced by `daemon` (or plain, without the hook). */
export async function timeJob(
  daemon: Daemon | undefined,
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<JobTiming> {
  const traced = daemon ? jobEnv(daemon.paths) : {};
  const t0 = performance.now();
  const out = await new Deno.Command(cmd, {
    args,
    env: { ...traced, ...env },
    stdout: "piped",
    stderr: "inherit",
  })
    .output();
  const exitMs = performance.now() - t0;
  if (!out.success) throw new Error(`${cmd} failed with ${out.code}`);
  if (daemon) await untilDrained(daemon, cmd);
  return {
    stdout: new TextDecoder().decode(out.stdout),
    exitMs,
    drainedMs: performance.now() - t0,
  };
}

/** A workload run by {@linkcode timeGatedJob}, and what runs at its gate. */
export interface GatedJob {
  cmd: string;
  args: string[];
  env: Record<string, string>;
  /** Runs once the job said `ready`, before it is told to go on. */
  whenReady: () => void;
}

/**
 * Runs a workload that prints a line `ready` and then waits for a line on
 * its stdin before the part it times: `whenReady` runs in between, so what
 * it sets up is fresh when that part starts, however long the job took to
 * get there. Traced by `daemon`; timed from the start, as timeJob. A job
 * that never says `ready` is an error, not a row timed without the gate.
 */
export async function timeGatedJob(
  daemon: Daemon,
  job: GatedJob,
): Promise<JobTiming> {
  const t0 = performance.now();
  const child = new Deno.Command(job.cmd, {
    args: job.args,
    env: { ...jobEnv(daemon.paths), ...job.env },
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const decoder = new TextDecoder();
  let stdout = "";
  let ready = false;
  const go = child.stdin.getWriter();
  try {
    for await (const bytes of child.stdout) {
      stdout += decoder.decode(bytes, { stream: true });
      if (ready || !/^ready$/m.test(stdout)) continue;
      ready = true;
      job.whenReady();
      // Three bytes fit any pipe's buffer: the write never waits on the job.
      await go.write(new TextEncoder().encode("go\n"));
      await go.close();
    }
  } catch (e) {
    try {
      child.kill();
    } catch { /* it ended already */ }
    await child.status;
    throw e;
  }
  if (!ready) {
    await go.close().catch(() => {});
    await child.status;
    throw new Error(`${job.cmd} printed no ready line: ${stdout}`);
  }
  const status = await child.status;
  const exitMs = performance.now() - t0;
  if (!status.success) throw new Error(`${job.cmd} failed with ${status.code}`);
  await untilDrained(daemon, job.cmd);
  return { stdout, exitMs, drainedMs: performance.now() - t0 };
}

/** Waits until the daemon has read all the traced job `cmd` sent (60 s at most). */
async function untilDrained(daemon: Daemon, cmd: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    daemon.registry.scan();
    const p = [...daemon.registry.processes.values()].find((p) =>
      p.header.command.startsWith(cmd) && !p.finished
    );
    if (!p || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** Median of a few numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Adds one row to the bench table: our figure beside its same-run baseline. */
export type Row = (
  what: string,
  ours: string,
  baseline: string,
  target: string,
  ok: boolean,
) => void;

/** One row of the table as data: the texts, and their leading numbers. */
export interface BenchRow {
  what: string;
  ours: string;
  baseline: string;
  target: string;
  met: boolean;
  /** The first number in `ours` (its unit follows it there), or null. */
  oursValue: number | null;
  /** The first number in `baseline`, or null. */
  baselineValue: number | null;
}

/** The first number written in a figure ("p99 0.41 ms" gives 0.41). */
function leadingNumber(text: string): number | null {
  // Not the digits of a word: "p99 0.41 ms" is 0.41.
  const m = /(?<![\w.])[-+]?\d+(?:\.\d+)?/.exec(text);
  return m ? Number(m[0]) : null;
}

/**
 * The bench table: `row` adds a row, `print` writes them all in aligned
 * columns once every figure is in, `rows` gives them as data (the JSON).
 *
 * @example
 * ```ts
 * import { benchTable } from "./_jobs.ts";
 * const table = benchTable();
 * table.row("op launch", "40 ns", "12 ns direct", "<= +100 ns", true);
 * table.print();
 * ```
 */
export function benchTable(): {
  row: Row;
  print(): void;
  rows(): BenchRow[];
} {
  const rows: BenchRow[] = [];
  return {
    row: (what, ours, baseline, target, met) =>
      rows.push({
        what,
        ours,
        baseline,
        target,
        met,
        oursValue: leadingNumber(ours),
        baselineValue: leadingNumber(baseline),
      }),
    print() {
      const head = ["what", "ours", "baseline (same run)", "target", ""];
      const cells = rows.map((
        r,
      ) => [r.what, r.ours, r.baseline, r.target, r.met ? "met" : "MISSED"]);
      const widths = head.map((_, i) =>
        Math.max(...[head, ...cells].map((r) => r[i].length))
      );
      for (const r of [head, ...cells]) {
        console.log(r.map((c, i) => c.padEnd(widths[i])).join("  "));
      }
    },
    rows: () => rows,
  };
}
