/**
 * check-leaks, compare and snapshot on the matrix of logs of
 * `_log_shapes.ts` (issue 11): for each log, the whole command (a fresh
 * `./stompwatch ...`, launcher and start-up included) next to reading the
 * same file in the same run (warm cache, 2 MiB reads); compare on each log
 * and its next-step variant.
 * Part of `deno task bench`; alone: `deno run -A bench/analysis_matrix.ts`.
 * STOMPWATCH_BENCH_MATRIX=issue keeps only the issue's own shape and one
 * fixture (a quick look); STOMPWATCH_BENCH_SKIP_1GB=1 leaves out the 1 GB
 * peak-memory row; STOMPWATCH_BENCH_ONLY=compare (or check-leaks, or
 * snapshot, or a comma-separated list) runs only those commands' rows.
 *
 * @module
 */
import { median, type Row } from "./_jobs.ts";
import {
  type LogShape,
  repeatFixture,
  SHAPES,
  writeShapedLog,
  type WrittenLog,
} from "./_log_shapes.ts";
import { runAlone } from "./_report.ts";

const STOMPWATCH = new URL("../stompwatch", import.meta.url).pathname;
const FIXTURES =
  new URL("../../shared/fixtures/msmemscope/", import.meta.url).pathname;
const ROWS = 1_000_000;

/** Reads a file through 2 MiB reads: the rate the analyses compete with. */
export async function readAll(path: string): Promise<number> {
  const buf = new Uint8Array(2 << 20);
  using file = await Deno.open(path);
  let n = 0;
  for (;;) {
    const got = await file.read(buf);
    if (got === null) return n;
    n += got;
  }
}

/** Best time of `n` reads of `paths`, in ms. */
async function readMs(paths: string[], n = 3): Promise<number> {
  let best = Infinity;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    for (const p of paths) await readAll(p);
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

/**
 * A whole `./stompwatch` command, as a user types it (the launcher and the
 * permissions it grants included): wall time, peak RSS and exit code.
 */
export async function command(
  args: string[],
): Promise<{ ms: number; mb: number; code: number }> {
  const t0 = performance.now();
  const out = await new Deno.Command("/usr/bin/time", {
    args: ["-f", "maxrss_kb=%M", STOMPWATCH, ...args],
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t0;
  const err = new TextDecoder().decode(out.stderr);
  const kb = /maxrss_kb=(\d+)/.exec(err);
  // check-leaks exits 1 for leaks and 2 when no device could be checked.
  if (!kb || out.code > 2) {
    throw new Error(`Bench command ${args[0]} failed: ${err.slice(0, 500)}`);
  }
  return { ms, mb: Number(kb[1]) / 1024, code: out.code };
}

/** `./stompwatch check-leaks` over `path`'s windows of `mark` marks, whole. */
function checkLeaks(
  path: string,
  mark: string,
): Promise<{ ms: number; mb: number; code: number }> {
  return command(["check-leaks", "--input", path, "--mstx-info", mark]);
}

/** Best of `n` runs; one run that takes over 5 s is enough. */
async function best(
  n: number,
  run: (i: number) => Promise<{ ms: number; mb: number }>,
): Promise<{ ms: number; mb: number; runs: number }> {
  let ms = Infinity, mb = 0, runs = 0;
  while (runs === 0 || (runs < n && ms <= 5000)) {
    const r = await run(runs++);
    ms = Math.min(ms, r.ms);
    mb = Math.max(mb, r.mb);
  }
  return { ms, mb, runs };
}

const mbOf = (bytes: number) => bytes / 1e6;
const rate = (bytes: number, ms: number) => mbOf(bytes) / (ms / 1000);

/** One log of the matrix and its next-step variant, for compare. */
interface MatrixLog {
  label: string;
  log: WrittenLog;
  pair: WrittenLog;
  /** What the pair is, in compare's row: its next step when not given. */
  pairLabel?: string;
  /** The compare level the pair has rows of. */
  level: "op" | "kernel";
  /** Mark name check-leaks looks for. */
  mark: string;
  multiDevice: boolean;
}

function* matrixLogs(dir: string, quick: boolean): Generator<MatrixLog> {
  const shapes: LogShape[] = quick ? [SHAPES[0]] : [...SHAPES];
  for (const [i, shape] of shapes.entries()) {
    yield {
      label: shape.name,
      log: writeShapedLog(`${dir}/shape${i}.csv`, ROWS, shape),
      pair: writeShapedLog(`${dir}/shape${i}_next.csv`, ROWS, shape, true),
      level: "op",
      mark: "step",
      multiDevice: shape.devices > 1,
    };
  }
  const fixture = (name: string) => `${FIXTURES}${name}.csv`;
  // The same number of copies on both sides: one step against the next.
  const base = repeatFixture(
    fixture("compare_baseline"),
    `${dir}/compare_baseline.csv`,
    ROWS,
  );
  const copies = base.copies;
  yield {
    label: "real fixture compare_baseline repeated",
    log: base,
    pair: repeatFixture(
      fixture("compare_leaks"),
      `${dir}/compare_leaks.csv`,
      ROWS,
      copies,
    ),
    level: "op",
    mark: "step",
    multiDevice: false,
  };
  if (quick) return;
  const a = repeatFixture(
    fixture("memscope_dump_two_ranks_a"),
    `${dir}/two_ranks_a.csv`,
    ROWS,
  );
  yield {
    label: "real fixture two_ranks_a repeated (2 ranks)",
    log: a,
    pair: repeatFixture(
      fixture("memscope_dump_two_ranks_b"),
      `${dir}/two_ranks_b.csv`,
      ROWS,
      a.copies,
    ),
    level: "kernel",
    mark: "[mstx]: mstxMarkA :------training start----- ",
    multiDevice: true,
  };
}

async function checkLeaksRow(
  row: Row,
  m: MatrixLog,
  startUpMs: number,
): Promise<void> {
  const { path, bytes } = m.log;
  const read = await readMs([path]);
  const run = await best(3, () => checkLeaks(path, m.mark));
  const r = rate(bytes, run.ms);
  row(
    `check-leaks, ${m.label} (${mbOf(bytes).toFixed(0)} MB)`,
    `${r.toFixed(0)} MB/s (${run.ms.toFixed(0)} ms with ${
      startUpMs.toFixed(0)
    } ms start-up, ${run.mb.toFixed(0)} MB peak)`,
    `${rate(bytes, read).toFixed(0)} MB/s read only`,
    ">= 1000 MB/s",
    r >= 1000,
  );
}

async function compareRow(row: Row, m: MatrixLog, dir: string): Promise<void> {
  const paths = [m.log.path, m.pair.path];
  const bytes = m.log.bytes + m.pair.bytes;
  const read = await readMs(paths);
  const out = `${dir}/compare_out`;
  const run = await best(
    2,
    () =>
      command([
        "compare",
        "--input",
        paths.join(","),
        "--level",
        m.level,
        "--output",
        out,
      ]),
  );
  Deno.removeSync(out, { recursive: true });
  const r = rate(bytes, run.ms);
  row(
    `compare --level ${m.level}, ${m.label} and ${
      m.pairLabel ?? "its next step"
    } (${mbOf(bytes).toFixed(0)} MB)`,
    `${r.toFixed(0)} MB/s (${run.ms.toFixed(0)} ms, ${
      run.mb.toFixed(0)
    } MB peak)`,
    `${rate(bytes, read).toFixed(0)} MB/s read only`,
    ">= 500 MB/s",
    r >= 500,
  );
}

async function snapshotRow(row: Row, m: MatrixLog, dir: string): Promise<void> {
  const { path, bytes } = m.log;
  const read = await readMs([path]);
  const run = await best(
    2,
    (i) =>
      command([
        "snapshot",
        "--input",
        path,
        "-o",
        `${dir}/snap${i}.pickle`,
        ...(m.multiDevice ? ["--device", "0"] : []),
      ]),
  );
  for (let i = 0; i < run.runs; i++) Deno.removeSync(`${dir}/snap${i}.pickle`);
  const r = rate(bytes, run.ms);
  row(
    `snapshot${m.multiDevice ? " --device 0" : ""}, ${m.label}`,
    `${r.toFixed(0)} MB/s (${run.ms.toFixed(0)} ms, ${
      run.mb.toFixed(0)
    } MB peak)`,
    `${rate(bytes, read).toFixed(0)} MB/s read only`,
    ">= 500 MB/s (row 8's)",
    r >= 500,
  );
}

/**
 * compare of the op-heavy log and a step made by `variant` (writeShapedLog),
 * its row named by `names` (MatrixLog's label and pairLabel).
 */
async function opHeavyPairRow(
  row: Row,
  dir: string,
  variant: number | "unrelated",
  names: { label: string; pairLabel?: string },
): Promise<void> {
  const shape = SHAPES[2];
  const log = writeShapedLog(`${dir}/op_heavy.csv`, ROWS, shape);
  const pair = writeShapedLog(`${dir}/op_heavy_pair.csv`, ROWS, shape, variant);
  const m = { ...names, log, pair, level: "op", mark: "step" } as const;
  await compareRow(row, { ...m, multiDevice: true }, dir);
  Deno.removeSync(log.path);
  Deno.removeSync(pair.path);
}

/** check-leaks' peak memory on a ~1 GB log of the issue's shape. */
async function peakRow(row: Row, dir: string): Promise<void> {
  const log = writeShapedLog(`${dir}/big.csv`, 7_500_000, SHAPES[0]);
  const idle = await command(["help"]);
  const run = await checkLeaks(log.path, "step");
  Deno.removeSync(log.path);
  row(
    `check-leaks peak RSS, ${SHAPES[0].name} (${
      (log.bytes / 1e9).toFixed(2)
    } GB)`,
    `${run.mb.toFixed(0)} MB (${rate(log.bytes, run.ms).toFixed(0)} MB/s)`,
    `${idle.mb.toFixed(0)} MB idle deno (main.ts help)`,
    "< 256 MB",
    run.mb < 256,
  );
}

/**
 * check-leaks on a job marked only at its start and its end, so that one
 * window holds every memory row: fewer than it keeps at once (2,500,000),
 * then more, its IDs in order or not (README).
 */
async function wholeWindowRows(row: Row, dir: string): Promise<void> {
  // 1M and 2.7M rows: the window's memory rows (80%) fit the row budget
  // (2.5M) and are replayed from memory (leak_replay.c); 3.4M: they do
  // not, and are replayed as they are read (leak_stream.c). Until the
  // budget was 2.5M, 2.7M rows were replayed as read. 7M rows holding
  // 500,000 blocks at once: a replay as read with that many pending; 1.1M
  // at once: within one replay's room (1.25M; it was 1M, and that log was
  // read in three parts); 1.6M: past it, replayed in parts. 5M rows of 64
  // devices interleaved, each numbering its own IDs (all within 65,536 of
  // each other) and holding 10,000 blocks: the replay remembers a FREE
  // only as far back as the MALLOCs come (it was read in three parts).
  // 5M rows holding every block to the end, freed past the last mark: the
  // hostile tester's window that frees nothing (2026-11-27), whose blocks
  // filled the replay's room again and again (nine reads of 1 GB). 7M
  // rows holding 500,000 blocks, written as msMemScope writes its log (each
  // MALLOC row at its block's free): MALLOCs come millions of IDs back, the
  // replay's horizon is the whole window (22 s, 580 MB, until 2026-11-27).
  const logs = [
    [1_000_000, "ordered"],
    [2_700_000, "ordered"],
    [2_700_000, "shuffled"],
    [3_400_000, "ordered"],
    [7_000_000, "ordered", 500_000],
    [7_000_000, "ordered", 1_100_000],
    [7_000_000, "ordered", 1_600_000],
    [5_000_000, "shuffled", 10_000, 64],
    [5_000_000, "ordered", Infinity],
    [7_000_000, "at-free", 500_000],
  ] as const;
  for (const [rows, ids, held, devices = 1] of logs) {
    const holding = held === Infinity
      ? ", none freed before the last mark"
      : held
      ? `, ${held.toLocaleString("en")} blocks held${
        devices > 1 ? " each" : ""
      }`
      : "";
    const shape: LogShape = {
      name: `memory 80%, ${
        devices > 1 ? `${devices} devices interleaved` : "1 device"
      }, one window over every row${holding}, ${
        ids === "ordered"
          ? "IDs in order"
          : ids === "shuffled"
          ? "IDs out of order"
          : "rows written at each block's free"
      }`,
      mix: "memory",
      devices,
      layout: devices > 1 ? "interleaved" : "sequential",
      ids,
      window: "whole",
      held,
    };
    const log = writeShapedLog(`${dir}/whole.csv`, rows, shape);
    const read = await readMs([log.path]);
    // Best of 3, as every other check-leaks row of the matrix.
    const run = await best(3, () => checkLeaks(log.path, "step"));
    Deno.removeSync(log.path);
    const r = rate(log.bytes, run.ms);
    row(
      `check-leaks, ${shape.name} (${(log.bytes / 1e6).toFixed(0)} MB)`,
      `${r.toFixed(0)} MB/s (${run.ms.toFixed(0)} ms, ${
        run.mb.toFixed(0)
      } MB peak)`,
      `${rate(log.bytes, read).toFixed(0)} MB/s read only`,
      ">= 1000 MB/s, < 256 MB",
      r >= 1000 && run.mb < 256,
    );
  }
}

/**
 * Runs the matrix and reports through `row`.
 *
 * @example
 * ```ts
 * import { benchAnalysisMatrix } from "./analysis_matrix.ts";
 * await benchAnalysisMatrix((what, ours, base, target, ok) =>
 *   console.log(what, ours, base, target, ok)
 * );
 * ```
 */
export async function benchAnalysisMatrix(row: Row): Promise<void> {
  const quick = Deno.env.get("STOMPWATCH_BENCH_MATRIX") === "issue";
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_bench_matrix_" });
  try {
    // Start-up (main.ts help): a share of every whole-command figure.
    const startUp: number[] = [];
    for (let i = 0; i < 3; i++) {
      startUp.push((await command(["help"])).ms);
    }
    const only = Deno.env.get("STOMPWATCH_BENCH_ONLY")?.split(",");
    const runs = (command: string) => only?.includes(command) ?? true;
    for (const m of matrixLogs(dir, quick)) {
      if (runs("check-leaks")) await checkLeaksRow(row, m, median(startUp));
      if (runs("compare")) await compareRow(row, m, dir);
      if (runs("snapshot")) await snapshotRow(row, m, dir);
      Deno.removeSync(m.log.path);
      Deno.removeSync(m.pair.path);
    }
    if (!quick && runs("compare")) {
      const name = SHAPES[2].name;
      // Shortest scripts of about 9,700 edits a device, past the steps of
      // the exact search (myers_diff.ts), found piece by piece.
      await opHeavyPairRow(row, dir, 20, {
        label: `${name} (every 20th op renamed)`,
      });
      // The hostile tester's shape (2026-11-27): no shortest script is
      // near, so every piece differs throughout.
      await opHeavyPairRow(row, dir, "unrelated", {
        label: name,
        pairLabel: "a step of another job",
      });
    }
    if (!quick && runs("check-leaks")) await wholeWindowRows(row, dir);
    if (
      Deno.env.get("STOMPWATCH_BENCH_SKIP_1GB") !== "1" && runs("check-leaks")
    ) {
      await peakRow(row, dir);
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

if (import.meta.main) await runAlone(benchAnalysisMatrix);
