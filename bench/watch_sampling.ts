/**
 * Rows 4 and 5 of `deno task bench`: what sampling a watched block costs.
 * A checksum watch is judged against a plain device-to-host copy of the
 * same block (memcpy), a full-content watch against `dd` writing the same
 * number of bytes into the same directory; both baselines are taken in the
 * same run, the memcpy one inside the same jobs. The 256 MiB block carries
 * the targets; the other sizes show how the cost scales.
 * Part of `deno task bench`; alone:
 * `deno run -A bench/watch_sampling.ts` (STOMPWATCH_BENCH_REPEAT=N runs
 * every measurement N times and reports the median, 3 by default;
 * STOMPWATCH_BENCH_ONLY=checksum or =content runs one of the two rows).
 *
 * @module
 */
import { type Daemon, startDaemon } from "../daemon/daemon.ts";
import { CHECKSUM_CSV_NAME } from "../watch/dump_names.ts";
import {
  benchTable,
  figure,
  median,
  type Row,
  timeGatedJob,
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

/** The `.bin` dumps in `dir`. */
function dumpsIn(dir: string): number {
  try {
    return [...Deno.readDirSync(dir)].filter((e) => e.name.endsWith(".bin"))
      .length;
  } catch {
    return 0;
  }
}

function removeDumps(dir: string): void {
  try {
    for (const e of Deno.readDirSync(dir)) {
      if (e.name.endsWith(".bin")) Deno.removeSync(`${dir}/${e.name}`);
    }
  } catch { /* no dump written yet */ }
}

/** Medians of a few measurements, each a figure, its baseline and their ratio. */
interface Paired {
  oursMs: number;
  baseMs: number;
  /** The median of the ratios of each pair, not the ratio of the medians. */
  ratio: number;
  /** Each pair's ratio, in the order measured. */
  ratios: number[];
  /**
   * A cache line's round trip between two threads just before each pair's
   * first sample, ns (NaN: not timed): see {@link pairsText}.
   */
  roundTrips: number[];
}

function paired(ours: number[], base: number[], roundTrips: number[]): Paired {
  const ratios = ours.map((o, i) => base[i] / o);
  return {
    oursMs: median(ours),
    baseMs: median(base),
    ratio: median(ratios),
    ratios,
    roundTrips,
  };
}

/** Checksum rows the daemon has written into `dir` so far. */
function checksumRows(dir: string): number {
  let rows = 0;
  try {
    for (const e of Deno.readDirSync(dir)) {
      if (!CHECKSUM_CSV_NAME.test(e.name)) continue;
      const text = Deno.readTextFileSync(`${dir}/${e.name}`);
      // The header is no row (a file left empty by a failed write: none).
      rows += Math.max(0, text.split("\n").filter((l) => l).length - 1);
    }
  } catch { /* no checksum written yet */ }
  return rows;
}

/**
 * Checksum watch of a `mib` MiB block: ms per sample next to ms per plain
 * copy of the block, both in one job (`bench_dump ... copy`): each Copy of
 * 4 bytes into the block is sampled before and after, and takes
 * microseconds itself, so a sample costs its time over the samples the
 * daemon wrote per Copy (README, the sampling rows, says what timing them
 * around another job's Fills got wrong).
 */
async function checksumSample(
  daemon: Daemon,
  mib: number,
  dumpDir: string,
): Promise<Paired> {
  const reps = 5;
  const samples: number[] = [],
    copies: number[] = [],
    roundTrips: number[] = [];
  for (let i = 0; i < repeat(); i++) {
    const before = checksumRows(dumpDir);
    const job = await timeJob(
      daemon,
      workload("bench_dump"),
      [String(mib), String(reps), "copy"],
      { ...deviceEnv(mib), STOMPWATCH_WATCH: "Copy:0,Copy" },
    );
    const written = checksumRows(dumpDir) - before, perCopy = written / reps;
    if (!(perCopy >= 1)) {
      throw new Error(
        `The checksum watch of ${mib} MiB wrote ${written} checksum rows for ${reps} watched Copies, fewer than one each`,
      );
    }
    samples.push(figure(job.stdout, "copy_ns") / perCopy / 1e6);
    copies.push(figure(job.stdout, "memcpy_ns") / 1e6);
    roundTrips.push(roundTripNs(job.stdout));
  }
  return paired(samples, copies, roundTrips);
}

/**
 * `dd` writing `files` new files of `mib` MiB into `dir`, one after
 * another, as a job's samples are written: ms per file. It first frees
 * the files of the writer before it (every `.bin` there), and leaves its
 * own for the writer after it to free.
 */
async function ddMs(dir: string, mib: number, files: number): Promise<number> {
  removeDumps(dir);
  const t0 = performance.now();
  for (let i = 0; i < files; i++) {
    const dd = await new Deno.Command("dd", {
      args: ["if=/dev/zero", `of=${dir}/dd${i}.bin`, "bs=1M", `count=${mib}`],
      stderr: "null",
    }).output();
    if (!dd.success) throw new Error("dd failed");
  }
  return (performance.now() - t0) / files;
}

/**
 * Full-content watch of a `mib` MiB block: ms per sample, from the job's
 * first watched Copy of 4 bytes into the block (`bench_dump ... copy`; a
 * Copy takes microseconds, its samples the rest) until the daemon has
 * written every dump; next to ms per file of dd writing as many files of
 * that size into the same directory just before and just after the job
 * (their mean).
 *
 * Each of the three writers starts the moment as many bytes of files were
 * freed as it will write: dd before the job frees a batch written for that
 * alone, the job frees dd's once it is ready for its first Copy (it waits
 * for the word), dd after the job frees the job's dumps. On a VM whose
 * balloon takes back free memory (virtio free page reporting) a page
 * cache page freed seconds ago costs the host a fault to touch again: on
 * the 2-vCPU EPYC VM of 2026-11-26, dd wrote 256 MiB files in 84-92 ms
 * each right after 1.5 GiB were freed, 185-196 ms 1.5 s later and 258-273
 * ms 4 s later. The job used to free dd's files before it started, and
 * wrote its first dump about a second later (process start, its block and
 * host buffer, its memcpy baseline): against dd's fresh pages, that alone
 * made the row 0.45-0.7x.
 */
async function contentSample(
  daemon: Daemon,
  mib: number,
  dumpDir: string,
): Promise<Paired> {
  const reps = 3, samples = 2 * reps;
  const times: number[] = [], dds: number[] = [], roundTrips: number[] = [];
  for (let i = 0; i < repeat(); i++) {
    await ddMs(dumpDir, mib, samples); // only there to be freed by the next
    const ddBefore = await ddMs(dumpDir, mib, samples);
    const startedMs = Date.now();
    const full = await timeGatedJob(daemon, {
      cmd: workload("bench_dump"),
      args: [String(mib), String(reps), "copy", "wait"],
      env: { ...deviceEnv(mib), STOMPWATCH_WATCH: "Copy:0,Copy,full-content" },
      whenReady: () => removeDumps(dumpDir),
    });
    const written = dumpsIn(dumpDir);
    if (written !== samples) {
      throw new Error(
        `The full-content watch of ${mib} MiB wrote ${written} dumps, not ${samples}`,
      );
    }
    const drainedMs = startedMs + full.drainedMs;
    const copiesMs = drainedMs -
      figure(full.stdout, "ops_start_unix_ns") / 1e6;
    times.push(copiesMs / samples);
    roundTrips.push(roundTripNs(full.stdout));
    dds.push((ddBefore + await ddMs(dumpDir, mib, samples)) / 2);
    removeDumps(dumpDir);
  }
  return paired(times, dds, roundTrips);
}

/**
 * Each pair's ratio and a cache line's round trip between two threads
 * just before its job's first sample: both rows' samples are read by
 * another thread than the one that copied them (the hasher, the daemon),
 * and where the host has the two vCPUs far apart that takes twice as long.
 */
function pairsText(p: Paired): string {
  return `pairs ${p.ratios.map((r) => `${r.toFixed(2)}x`).join(", ")}` +
    `; core-to-core round trip ${
      p.roundTrips.map((t) => Number.isNaN(t) ? "?" : t).join(", ")
    } ns`;
}

/** The round trip bench_dump timed, NaN where it could not (it says -1). */
function roundTripNs(stdout: string): number {
  const ns = Number(/^core_roundtrip_ns (-?\d+)$/m.exec(stdout)?.[1] ?? NaN);
  return ns >= 0 ? ns : NaN;
}

/**
 * Rows 4 and 5: checksum watch vs memcpy, full-content watch vs dd, each
 * ratio the median of the ratios of pairs measured next to each other
 * (the machine's pace drifts between pairs more than within one).
 */
export async function benchWatchSampling(
  daemon: Daemon,
  row: Row,
  out: string,
): Promise<void> {
  const only = Deno.env.get("STOMPWATCH_BENCH_ONLY");
  const dumpDir = `${out}/watch_dump`;
  for (const mib of only === "content" ? [] : [8, 64, 256]) {
    const s = await checksumSample(daemon, mib, dumpDir);
    const { oursMs, baseMs, ratio } = s;
    row(
      `checksum watch of ${mib} MiB`,
      `${gib(mib * MIB, oursMs)} GiB/s per sample (${ratio.toFixed(2)}x; ${
        pairsText(s)
      })`,
      `${gib(mib * MIB, baseMs)} GiB/s memcpy`,
      mib === 256 ? ">= 0.9x memcpy" : "-",
      mib !== 256 || ratio >= 0.9,
    );
  }
  for (const mib of only === "checksum" ? [] : [64, 256]) {
    const c = await contentSample(daemon, mib, dumpDir);
    const { oursMs, baseMs, ratio } = c;
    row(
      `full-content watch of ${mib} MiB`,
      `${gib(mib * MIB, oursMs)} GiB/s per sample (${ratio.toFixed(2)}x; ${
        pairsText(c)
      })`,
      `${gib(mib * MIB, baseMs)} GiB/s dd (6 new files)`,
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
