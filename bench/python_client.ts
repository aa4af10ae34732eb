/**
 * Benchmark rows of the Python client: the dispatch mode's cost per Aten op
 * and per training step, each beside its baseline, all measured in one
 * traced Python process (bench/python/dispatch_cost.py alternates the
 * setups round by round and keeps each one's best round). Per-op figures
 * are the job thread's CPU time, with the wall-clock difference beside.
 *
 * Run alone with `deno run -A bench/python_client.ts`; `deno task bench`
 * runs it as one of its rows.
 *
 * @module
 */
import { jobEnv } from "../daemon/config.ts";
import { type Daemon, startDaemon } from "../daemon/daemon.ts";
import type { Row } from "./_jobs.ts";

const script = new URL("./python/dispatch_cost.py", import.meta.url).pathname;

interface OpFigures {
  plain: number;
  empty_mode: number;
  recording: number;
  idle: number;
}
interface Figures {
  /** On the job thread's CPU clock: what the mode costs the job itself. */
  op_us: OpFigures;
  /** On the wall clock, also counting waits for a core. */
  op_wall_us: OpFigures;
  step_ms: { plain: number; recording: number; watched_4mib: number };
  torch: string;
}

/** Runs the Python benchmark job traced by `daemon` and adds its rows. */
export async function benchPythonClient(
  daemon: Daemon,
  row: Row,
  ops = 20000,
  steps = 4,
): Promise<void> {
  const out = await new Deno.Command("python3", {
    args: [script, String(ops), String(steps)],
    env: jobEnv(daemon.paths),
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`${script} failed with ${out.code}`);
  const f = JSON.parse(
    new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!,
  ) as Figures;
  const o = f.op_us, wall = f.op_wall_us, s = f.step_ms;
  const us = (x: number) => `${x.toFixed(2)} µs/op`;
  const plus = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(2)} µs`;
  row(
    `Aten op (torch ${f.torch}), recording on`,
    `${us(o.recording)} (${plus(o.recording - o.plain)}; wall ${
      plus(wall.recording - wall.plain)
    })`,
    `${us(o.plain)} no mode; ${us(o.empty_mode)} empty mode (${
      plus(o.empty_mode - o.plain)
    }; wall ${plus(wall.empty_mode - wall.plain)})`,
    "<= +4 µs",
    o.recording - o.plain <= 4,
  );
  row(
    "Aten op, nothing watched, recording off",
    `${us(o.idle)} (${plus(o.idle - o.plain)})`,
    `${us(o.plain)} no mode`,
    "< +0.1 µs",
    o.idle - o.plain < 0.1,
  );
  const ratio = (x: number) => `${(x / s.plain).toFixed(3)}x`;
  row(
    "MLP step (4x2048, batch 256), recording on",
    `${s.recording.toFixed(1)} ms (${ratio(s.recording)})`,
    `${s.plain.toFixed(1)} ms plain PyTorch`,
    "<= 1.05x",
    s.recording / s.plain <= 1.05,
  );
  row(
    "MLP step, one 4 MiB tensor watched (checksums)",
    `${s.watched_4mib.toFixed(1)} ms (${ratio(s.watched_4mib)})`,
    `${s.plain.toFixed(1)} ms plain PyTorch`,
    "<= 1.5x",
    s.watched_4mib / s.plain <= 1.5,
  );
}

if (import.meta.main) {
  const out = Deno.makeTempDirSync({ prefix: "stompwatch_bench_py_" });
  const daemon = await startDaemon({ outputDir: out, checksum: "xxh3" });
  await benchPythonClient(daemon, (...r) => console.log(r.join("  |  ")));
  await daemon.stop();
  Deno.removeSync(out, { recursive: true });
}
