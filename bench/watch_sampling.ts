/**
 * Rows 4 and 5 of `deno task bench`: what sampling a watched block costs.
 * A checksum watch is judged against a plain device-to-host copy of the
 * same block (memcpy), a full-content watch against `dd` writing the same
 * number of bytes into the same directory; both baselines are taken in the
 * same run, the memcpy one inside the same jobs. The 256 MiB block carries
 * the targets; the other sizes show how the cost scales.
 * Part of `deno task bench`; alone:
 * `deno run -A bench/watch_sampling.ts` (STOMPWATCH_BENCH_REPEAT=N runs
 * every measurement N times and reports the median, 3 by default).
 *
 * @module
 */
import { type Daemon, startDaemon } from "../daemon/daemon.ts";
import {
  benchTable,
  figure,
  median,
  type Row,
  timeJob,
  workload,
} from "./_jobs.ts";

const MIB = 1 << 20;
const gib = (bytes: number, ms: number) =>
  (bytes / 2 ** 30 / (ms / 1000)).toFixed(2);

function repeat(): number {
  const n = Number(Deno.env.get("STOMPWATCH_BENCH_REPEAT") ?? "3");
  return Number.isInteger(n) && n > 0 ? n : 3;
}

/** Device memory for a block of `mib` MiB and the Fill's input beside it. */
function deviceEnv(mib: number): Record<string, string> {
  return { STOMPWATCH_TEST_DEVICE_BYTES: String((mib + 1) * MIB) };
}

function removeDumps(dir: string): void {
  try {
    for (const e of Deno.readDirSync(dir)) {
      if (e.name.endsWith(".bin")) Deno.removeSync(`${dir}/${e.name}`);
    }
  } catch { /* no dump written yet */ }
}

/**
 * Checksum watch of a `mib` MiB block: ms per sample and ms per plain copy
 * of the block (medians). Each watched Fill is one op plus two samples, so a
 * sample costs half the extra time over an unwatched Fill.
 */
async function checksumSample(
  daemon: Daemon,
  mib: number,
): Promise<{ sampleMs: number; memcpyMs: number }> {
  const args = [String(mib), "5"];
  const samples: number[] = [], copies: number[] = [];
  for (let i = 0; i < repeat(); i++) {
    const plain = await timeJob(
      daemon,
      workload("bench_dump"),
      args,
      deviceEnv(mib),
    );
    const sum = await timeJob(daemon, workload("bench_dump"), args, {
      ...deviceEnv(mib),
      STOMPWATCH_WATCH: "Fill:0,Fill",
    });
    samples.push(
      (figure(sum.stdout, "fill_ns") - figure(plain.stdout, "fill_ns")) / 2 /
        1e6,
    );
    copies.push(
      figure(plain.stdout, "memcpy_ns") / 1e6,
      figure(sum.stdout, "memcpy_ns") / 1e6,
    );
  }
  return { sampleMs: median(samples), memcpyMs: median(copies) };
}

/** `dd` writing `mib` MiB into `dir`, ms (median). */
async function ddMs(dir: string, mib: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < repeat(); i++) {
    const t0 = performance.now();
    const dd = await new Deno.Command("dd", {
      args: ["if=/dev/zero", `of=${dir}/dd.bin`, "bs=1M", `count=${mib}`],
      stderr: "null",
    }).output();
    if (!dd.success) throw new Error("dd failed");
    times.push(performance.now() - t0);
    Deno.removeSync(`${dir}/dd.bin`);
  }
  return median(times);
}

/**
 * Full-content watch of a `mib` MiB block: ms per sample, from the job's
 * start until the daemon has written every dump, less an unwatched job's.
 */
async function contentSample(
  daemon: Daemon,
  mib: number,
  dumpDir: string,
): Promise<number> {
  const reps = 3;
  const args = [String(mib), String(reps)];
  const times: number[] = [];
  for (let i = 0; i < repeat(); i++) {
    const plain = await timeJob(
      daemon,
      workload("bench_dump"),
      args,
      deviceEnv(mib),
    );
    const full = await timeJob(daemon, workload("bench_dump"), args, {
      ...deviceEnv(mib),
      STOMPWATCH_WATCH: "Fill:0,Fill,full-content",
    });
    times.push((full.drainedMs - plain.drainedMs) / (2 * reps));
    removeDumps(dumpDir);
  }
  return median(times);
}

/** Rows 4 and 5: checksum watch vs memcpy, full-content watch vs dd. */
export async function benchWatchSampling(
  daemon: Daemon,
  row: Row,
  out: string,
): Promise<void> {
  for (const mib of [8, 64, 256]) {
    const { sampleMs, memcpyMs } = await checksumSample(daemon, mib);
    const ratio = memcpyMs / sampleMs;
    row(
      `checksum watch of ${mib} MiB`,
      `${gib(mib * MIB, sampleMs)} GiB/s per sample (${ratio.toFixed(2)}x)`,
      `${gib(mib * MIB, memcpyMs)} GiB/s memcpy`,
      mib === 256 ? ">= 0.9x memcpy" : "-",
      mib !== 256 || ratio >= 0.9,
    );
  }
  const dumpDir = `${out}/watch_dump`;
  for (const mib of [64, 256]) {
    const dd = await ddMs(dumpDir, mib);
    const ms = await contentSample(daemon, mib, dumpDir);
    const ratio = dd / ms;
    row(
      `full-content watch of ${mib} MiB`,
      `${gib(mib * MIB, ms)} GiB/s per sample (${ratio.toFixed(2)}x)`,
      `${gib(mib * MIB, dd)} GiB/s dd`,
      mib === 256 ? ">= 0.8x dd" : "-",
      mib !== 256 || ratio >= 0.8,
    );
  }
}

if (import.meta.main) {
  const out = Deno.makeTempDirSync({ prefix: "stompwatch_bench_watch_" });
  const daemon = await startDaemon({
    outputDir: out,
    checksum: "xxh3",
    eventLog: false,
  });
  const table = benchTable();
  await benchWatchSampling(daemon, table.row, out);
  await daemon.stop();
  Deno.removeSync(out, { recursive: true });
  table.print();
}
