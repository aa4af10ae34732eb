/**
 * Latency of watch + remove pairs over the Unix socket against a live job,
 * next to a GET /health round trip over the same connection as baseline.
 *
 * @module
 */
import type { Daemon } from "../daemon/daemon.ts";
import { jobEnv } from "../daemon/config.ts";
import { median } from "./_jobs.ts";
import { workload } from "./_jobs.ts";

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
}

/** Runs `pairs` watch/remove pairs; returns percentiles in ms. */
export async function benchApiLatency(
  daemon: Daemon,
  pairs: number,
): Promise<{ p50: number; p99: number; healthP99: number }> {
  const gate = `${daemon.paths.outputDir}/go`;
  const job = new Deno.Command(workload("stomp"), {
    args: ["--wait-file", gate],
    env: jobEnv(daemon.paths),
    stdout: "piped",
  }).spawn();
  const reader = job.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("ready")) text += (await reader.read()).value ?? "";
  const addr = /A=(0x[0-9a-f]+)/.exec(text)![1];
  const client = Deno.createHttpClient(
    { proxy: { transport: "unix", path: daemon.paths.socket } } as never,
  );
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`http://localhost${path}`, {
      client,
      method,
      body: body ? JSON.stringify(body) : undefined,
    } as RequestInit);
    await r.arrayBuffer();
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status}`);
  };
  await new Promise((r) => setTimeout(r, 100));
  const pair: number[] = [], health: number[] = [];
  for (let i = 0; i < pairs; i++) {
    const t0 = performance.now();
    await call("POST", "/watch", {
      pid: job.pid,
      name: "bench",
      addr,
      length: 256,
    });
    await call("POST", "/remove", { name: "bench" });
    pair.push(performance.now() - t0);
    const t1 = performance.now();
    await call("GET", "/health");
    health.push(performance.now() - t1);
  }
  client.close();
  Deno.writeTextFileSync(gate, "");
  await reader.cancel();
  await job.status;
  return {
    p50: median(pair),
    p99: percentile(pair, 0.99),
    healthP99: percentile(health, 0.99),
  };
}
