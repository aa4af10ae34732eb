/**
 * Offline check_leaks on generated msMemScope logs: the rate on a 1M-row
 * (~146 MB) log next to the rate of merely reading the same file (warm
 * cache, same run) and msMemScope's own ~4.6 s (SPEC section 9); then the
 * peak RSS of `main.ts check-leaks` on a ~1 GB log, next to an idle Deno's.
 * Part of `deno task bench`; alone: `deno run -A bench/check_leaks.ts`.
 * STOMPWATCH_BENCH_SKIP_1GB=1 leaves out the 1 GB part (a minute or so).
 *
 * @module
 */
import { checkLeaksFile } from "../analysis/leaks/mod.ts";
import type { Row } from "./_jobs.ts";
import { writeMemscopeLog } from "./_memscope_gen.ts";
import { runAlone } from "./_report.ts";
import { DAEMON_LIBRARY } from "../ffi/bindings.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
/** msMemScope's check_leaks on a 1M-row, 146 MB log (SPEC section 9). */
const MSMEMSCOPE_S = 4.6;

async function readAll(path: string): Promise<number> {
  const buf = new Uint8Array(2 << 20);
  using file = await Deno.open(path);
  let n = 0;
  for (;;) {
    const got = await file.read(buf);
    if (got === null) return n;
    n += got;
  }
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** Peak RSS in MB of `deno run main.ts ...args` as ./stompwatch runs it, and its time. */
async function peakRss(args: string[]): Promise<{ mb: number; ms: number }> {
  const deno = [
    Deno.execPath(),
    "run",
    "--quiet",
    "--allow-read",
    `--allow-ffi=${DAEMON_LIBRARY}`,
    MAIN,
  ];
  const t0 = performance.now();
  let timed = true;
  try {
    Deno.statSync("/usr/bin/time");
  } catch {
    timed = false;
  }
  if (timed) {
    const out = await new Deno.Command("/usr/bin/time", {
      args: ["-f", "maxrss_kb=%M", ...deno, ...args],
      stdout: "null",
      stderr: "piped",
    }).output();
    const kb = /maxrss_kb=(\d+)/.exec(new TextDecoder().decode(out.stderr));
    if (kb) return { mb: Number(kb[1]) / 1024, ms: performance.now() - t0 };
  }
  // No GNU time: poll the child's high-water mark until it exits.
  const child = new Deno.Command(deno[0], {
    args: [...deno.slice(1), ...args],
    stdout: "null",
    stderr: "null",
  }).spawn();
  let kb = 0, done = false;
  const status = child.status.then(() => (done = true));
  while (!done) {
    try {
      const s = Deno.readTextFileSync(`/proc/${child.pid}/status`);
      kb = Math.max(kb, Number(/VmHWM:\s+(\d+)/.exec(s)?.[1] ?? 0));
    } catch { /* exited */ }
    await new Promise((r) => setTimeout(r, 20));
  }
  await status;
  return { mb: kb / 1024, ms: performance.now() - t0 };
}

/**
 * Runs the check_leaks benchmarks and reports through `row`.
 *
 * @example
 * ```ts
 * import { benchCheckLeaks } from "./check_leaks.ts";
 * await benchCheckLeaks((what, ours, base, target, ok) =>
 *   console.log(what, ours, base, target, ok)
 * );
 * ```
 */
export async function benchCheckLeaks(row: Row): Promise<void> {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_bench_leaks_" });
  try {
    const path = `${dir}/memscope_dump_1m.csv`;
    const log = await writeMemscopeLog(path, 1_000_000);
    const mb = log.bytes / 1e6;
    const result = await checkLeaksFile(path, { mstxInfo: "step" });
    const expected = [...log.leaksInFirstStep.values()].reduce((a, b) => a + b);
    if (result.leakCount !== expected) {
      throw new Error(
        `check_leaks found ${result.leakCount} leaks in the generated log, not ${expected}`,
      );
    }
    // Warm cache for both; best of five each, interleaved.
    let readMs = Infinity, ourMs = Infinity;
    for (let i = 0; i < 5; i++) {
      readMs = Math.min(readMs, await timed(() => readAll(path)));
      ourMs = Math.min(
        ourMs,
        await timed(() => checkLeaksFile(path, { mstxInfo: "step" })),
      );
    }
    const rate = mb / (ourMs / 1000);
    row(
      `check-leaks, ${(log.rows / 1e6).toFixed(1)}M rows (${mb.toFixed(0)} MB)`,
      `${rate.toFixed(0)} MB/s (${ourMs.toFixed(0)} ms)`,
      `${(mb / (readMs / 1000)).toFixed(0)} MB/s read only; msMemScope ~${
        (mb / MSMEMSCOPE_S).toFixed(0)
      } MB/s (${MSMEMSCOPE_S} s, SPEC 9)`,
      ">= 500 MB/s",
      rate >= 500,
    );
    Deno.removeSync(path);

    if (Deno.env.get("STOMPWATCH_BENCH_SKIP_1GB") === "1") return;
    const big = `${dir}/memscope_dump_1g.csv`;
    const bigLog = await writeMemscopeLog(big, 6_900_000);
    const idle = await peakRss(["help"]);
    const run = await peakRss([
      "check-leaks",
      "--input",
      big,
      "--mstx-info",
      "step",
    ]);
    row(
      `check-leaks peak RSS, ${(bigLog.bytes / 1e9).toFixed(2)} GB log`,
      `${run.mb.toFixed(0)} MB (${
        (bigLog.bytes / 1e6 / (run.ms / 1000)).toFixed(0)
      } MB/s with start-up)`,
      `${idle.mb.toFixed(0)} MB idle deno (main.ts help)`,
      "< 256 MB",
      run.mb < 256,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

if (import.meta.main) await runAlone(benchCheckLeaks);
