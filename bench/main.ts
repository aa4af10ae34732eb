/**
 * `deno task bench`: every performance target of the watch pipeline, each
 * figure printed next to its baseline measured in the same run, below the
 * machine it ran on; the table is also written as JSON (`--json PATH`, or
 * `stompwatch_out/bench/bench_{stamp}.json`), for `bench/side_by_side.ts`.
 *
 * @module
 */
import { startDaemon } from "../daemon/daemon.ts";
import { benchTable, figure, median, timeJob, workload } from "./_jobs.ts";
import { benchApiLatency } from "./api_latency.ts";
import { benchCheckLeaks } from "./check_leaks.ts";
import { benchSnapshot } from "./snapshot.ts";
import { benchWatchSampling } from "./watch_sampling.ts";
import { benchPythonClient } from "./python_client.ts";
import { benchAnalysisMatrix } from "./analysis_matrix.ts";
import { benchCsvParsers } from "./csv_parsers.ts";
import { machine, parallelWork } from "./_machine.ts";
import { printReport, reportPath } from "./_report.ts";

function countLines(path: string): number {
  const bytes = Deno.readFileSync(path);
  let n = 0;
  for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) n++;
  return n;
}

const started = new Date();
const out = Deno.makeTempDirSync({ prefix: "stompwatch_bench_" });
// Measured once, before any row: the figures of another machine differ.
const facts = await machine(out);
// The event log is measured on its own (row 3); the other rows measure the
// watch pipeline without it.
const daemon = await startDaemon({
  outputDir: out,
  checksum: "xxh3",
  eventLog: false,
});
const table = benchTable();
const row = table.row;

// 1. Hook cost per op launch, nothing watched. The job times calls through
// the hook and calls to the runtime's own function in alternating blocks
// (see bench_ops.c): on a shared VM the drift between two runs is larger
// than the hook's cost, so the baseline is taken in the same process.
{
  const n = "400000"; // 400k hooked ops x 80 bytes fit the 64 MiB ring: the job never waits on the daemon
  const hooked: number[] = [], direct: number[] = [];
  for (let i = 0; i < 3; i++) {
    const { stdout } = await timeJob(daemon, workload("bench_ops"), [n]);
    hooked.push(figure(stdout, "ns_per_op"));
    direct.push(figure(stdout, "ns_per_op_direct"));
  }
  const added = median(hooked.map((h, i) => h - direct[i]));
  row(
    "op launch, nothing watched",
    `${median(hooked).toFixed(1)} ns/op (+${added.toFixed(1)} ns)`,
    `${median(direct).toFixed(1)} ns/op calling the runtime directly`,
    "<= +100 ns",
    added <= 100,
  );
}

// 2. Ring throughput from one producer into the daemon.
{
  const n = 5_000_000;
  const t = await timeJob(daemon, workload("bench_ring"), [String(n)]);
  const p = [...daemon.registry.processes.values()].find((p) =>
    p.header.command.includes("bench_ring")
  );
  const seen = (p?.recordsRead ?? 0) - 2; // less PROC_START and PROC_EXIT
  const rate = seen / (t.drainedMs / 1000);
  const emitRate = n / (figure(t.stdout, "emit_ns") / 1e9);
  row(
    "ring, one producer -> daemon",
    `${(rate / 1e6).toFixed(2)} M events/s (${seen} of ${n} read)`,
    `${(emitRate / 1e6).toFixed(2)} M events/s producer-side`,
    ">= 5 M/s",
    rate >= 5e6 && seen === n,
  );
}

// 3. The same flood with the event log on: every event becomes a CSV row.
{
  const n = 2_000_000;
  const logOut = `${out}/logged`;
  const logging = await startDaemon({ outputDir: logOut, checksum: "xxh3" });
  const run = async (d: typeof daemon) => {
    const t = await timeJob(d, workload("bench_ring"), [String(n)]);
    return n / (t.drainedMs / 1000);
  };
  const bare = await run(daemon);
  const logged = await run(logging);
  await logging.stop();
  const [file] = logging.log?.files() ?? [];
  const rows = file ? countLines(file.path) - 1 : 0; // less the header
  row(
    "event log, one producer -> CSV",
    `${(logged / 1e6).toFixed(2)} M events/s logged (${rows} rows)`,
    `${(bare / 1e6).toFixed(2)} M events/s without the log`,
    ">= 1 M/s",
    logged >= 1e6 && rows >= n,
  );
}

// 4 and 5. Sampling a watched block: checksum vs memcpy, full-content vs dd.
await benchWatchSampling(daemon, row, out);

// 6. POST /watch + POST /remove latency over the socket.
{
  const { p50, p99, healthP99 } = await benchApiLatency(daemon, 10_000);
  row(
    "POST /watch + /remove, 10,000 pairs",
    `p99 ${p99.toFixed(3)} ms (p50 ${p50.toFixed(3)} ms)`,
    `p99 ${healthP99.toFixed(3)} ms GET /health`,
    "p99 < 2 ms",
    p99 < 2,
  );
}

// 7. Offline check_leaks over generated msMemScope logs (no daemon).
await benchCheckLeaks(row);

// 7b. check-leaks, compare and snapshot on the matrix of log shapes.
await benchAnalysisMatrix(row);

// 7c. Our CSV row scanner against the npm CSV parsers on the same files.
await benchCsvParsers(row);

// 8. Snapshots: conversion rate and memory, OOM file delay (no daemon of ours).
await benchSnapshot(row);

// 9. The Python client's dispatch mode, per Aten op and per training step.
await benchPythonClient(daemon, row);

await daemon.stop();
Deno.removeSync(out, { recursive: true });
// Again after the last row: how far the machine's pace moved during the run.
facts.parallelAtEnd = await parallelWork();
printReport(table, facts, { started, path: reportPath(Deno.args, started) });
