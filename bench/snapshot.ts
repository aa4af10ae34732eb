/**
 * Snapshots (issue 10): `stompwatch snapshot` on a generated 1M-row log,
 * the whole command next to merely reading the same file (warm cache, same
 * run); its peak RSS on a ~1 GB log next to an idle Deno's; and how long
 * after a failed allocation with 100,000 live blocks the OOM files are
 * complete, next to the time the job took to make those blocks. Part of
 * `deno task bench`; alone: `deno run -A bench/snapshot.ts`.
 * STOMPWATCH_BENCH_SKIP_1GB=1 leaves out the 1 GB part.
 *
 * @module
 */
import { readMemscopeCsv } from "../analysis/memscope_csv/mod.ts";
import { benchTable, type Row } from "./_jobs.ts";
import { writeMemscopeLog } from "./_memscope_gen.ts";
import { workload } from "./_jobs.ts";

const STOMPWATCH = new URL("../stompwatch", import.meta.url).pathname;

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

/**
 * Wall time and peak RSS (MB) of `./stompwatch ...args`: the command a user
 * types, its launcher and the permissions it grants included.
 */
async function command(args: string[]): Promise<{ ms: number; mb: number }> {
  const t0 = performance.now();
  const out = await new Deno.Command("/usr/bin/time", {
    args: ["-f", "maxrss_kb=%M", STOMPWATCH, ...args],
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t0;
  const err = new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`snapshot failed: ${err}`);
  return { ms, mb: Number(/maxrss_kb=(\d+)/.exec(err)?.[1] ?? 0) / 1024 };
}

/** 1M rows: the whole command against reading the file, best of three each. */
async function conversion(row: Row, dir: string): Promise<void> {
  const path = `${dir}/memscope_dump_1m.csv`;
  const log = await writeMemscopeLog(path, 1_000_000);
  const mb = log.bytes / 1e6;
  let readMs = Infinity, ourMs = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    await readAll(path);
    readMs = Math.min(readMs, performance.now() - t0);
    const out = `${dir}/s${i}.pickle`;
    ourMs = Math.min(
      ourMs,
      (await command(["snapshot", "--input", path, "-o", out])).ms,
    );
    Deno.removeSync(out);
  }
  const rate = mb / (ourMs / 1000);
  row(
    `snapshot, ${(log.rows / 1e6).toFixed(1)}M rows (${
      mb.toFixed(0)
    } MB), whole command`,
    `${rate.toFixed(0)} MB/s (${ourMs.toFixed(0)} ms)`,
    `${(mb / (readMs / 1000)).toFixed(0)} MB/s read only`,
    ">= 500 MB/s",
    rate >= 500,
  );
  Deno.removeSync(path);
}

async function peak(row: Row, dir: string): Promise<void> {
  const big = `${dir}/memscope_dump_1g.csv`;
  const log = await writeMemscopeLog(big, 6_900_000);
  const idle = await command(["help"]);
  const run = await command([
    "snapshot",
    "--input",
    big,
    "-o",
    `${dir}/big.pickle`,
  ]);
  row(
    `snapshot peak RSS, ${(log.bytes / 1e9).toFixed(2)} GB log`,
    `${run.mb.toFixed(0)} MB (${
      (log.bytes / 1e6 / (run.ms / 1000)).toFixed(0)
    } MB/s)`,
    `${idle.mb.toFixed(0)} MB idle deno (main.ts help)`,
    "< 512 MB",
    run.mb < 512,
  );
}

/**
 * The oom workload under `./stompwatch run` with OOM_SNAPSHOT_ENABLE=1 and
 * 100,000 live 4 KiB blocks when it fails: from the OOM_DETAIL row's time
 * to the last OOM file's modification time. With `abort` the job dies right
 * after the failure (as frameworks do); without, it goes on to free its
 * 100,000 blocks while the daemon writes.
 */
async function oomDelay(row: Row, dir: string, abort: boolean): Promise<void> {
  const blocks = 100_000, block = 4096;
  dir = `${dir}/${abort ? "abort" : "free"}`;
  const snaps = `${dir}/snaps`;
  Deno.mkdirSync(dir);
  Deno.mkdirSync(snaps);
  const out = await new Deno.Command(STOMPWATCH, {
    args: [
      "run",
      "--output",
      `${dir}/out`,
      "--",
      workload("oom"),
      `${block}`,
      ...(abort ? ["abort"] : []),
    ],
    env: {
      OOM_SNAPSHOT_ENABLE: "1",
      OOM_SNAPSHOT_PATH: snaps,
      STOMPWATCH_TEST_DEVICE_BYTES: `${blocks * block}`,
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const count = Number(
    /count=(\d+)/.exec(new TextDecoder().decode(out.stdout))?.[1],
  );
  const logDir = `${dir}/out/device_0`;
  const [logName] = [...Deno.readDirSync(logDir)].map((e) => e.name);
  let start = 0, oom = 0;
  await readMemscopeCsv(`${logDir}/${logName}`, (r) => {
    const us = Number(r.timestamp.slice(0, -3)) / 1000;
    if (r.event === "SYSTEM" && r.eventType === "PROC_START") start = us;
    if (r.event === "OOM_DETAIL" && !oom) oom = us;
  });
  const done = Math.max(
    ...[...Deno.readDirSync(snaps)].map((e) =>
      Deno.statSync(`${snaps}/${e.name}`).mtime!.getTime()
    ),
  );
  const delay = done - oom;
  row(
    `OOM files, ${count} live blocks (mode 1), job ${
      abort ? "aborts" : "frees them"
    } after`,
    `complete ${
      delay.toFixed(0)
    } ms after the failed allocation (the job waits 0 ms)`,
    `${(oom - start).toFixed(0)} ms for the job to allocate them`,
    "<= 1000 ms",
    delay <= 1000 && count >= 99_000,
  );
}

/**
 * Runs the snapshot benchmarks and reports through `row`.
 *
 * @example
 * ```ts
 * import { benchSnapshot } from "./snapshot.ts";
 * await benchSnapshot((what, ours, base, target, ok) =>
 *   console.log(what, ours, base, target, ok)
 * );
 * ```
 */
export async function benchSnapshot(row: Row): Promise<void> {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_bench_snap_" });
  try {
    await conversion(row, dir);
    await oomDelay(row, dir, true);
    await oomDelay(row, dir, false);
    if (Deno.env.get("STOMPWATCH_BENCH_SKIP_1GB") !== "1") {
      await peak(row, dir);
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const table = benchTable();
  await benchSnapshot(table.row);
  table.print();
}
