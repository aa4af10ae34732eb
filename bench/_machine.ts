/**
 * The machine a bench ran on, measured once up front so that figures from
 * two machines can be read side by side: CPU model, cores, kernel, the
 * kernel's CPU vulnerability mitigations (they change the cost of every
 * system call and context switch), what a second thread adds (before the
 * first row and after the last), and the memcpy and dd rates the watch
 * rows are judged against (the same two measurements: `bench_dump`'s
 * memcpy of 256 MiB, dd of 256 MiB into the bench's directory).
 *
 * @module
 */
import { figure, median, timeJob, workload } from "./_jobs.ts";

/** What the bench prints about its machine. */
export interface Machine {
  cpu: string;
  cores: number;
  kernel: string;
  /** `/sys/devices/system/cpu/vulnerabilities/*`, file name to content. */
  mitigations: Record<string, string>;
  /** memcpy of 256 MiB, GiB/s. */
  memcpyGiBs: number;
  /** How memcpy was timed: the bench_dump workload, or Deno's copy. */
  memcpyBy: string;
  /** dd if=/dev/zero of 256 MiB in 1 MiB blocks, GiB/s. */
  ddGiBs: number;
  deno: string;
  /** What a second thread added before the first row (undefined: unbuilt). */
  parallel?: Parallel;
  /** The same after the last row, where the bench measured it again. */
  parallelAtEnd?: Parallel;
}

/**
 * What a second thread adds (`bench_cores`): a loop run for `ms` on one
 * thread, then on two at once, `rounds` times. A VM's second vCPU can be
 * a whole core one moment and next to nothing the next, and its pace can
 * halve (the 2-vCPU EPYC VM of 2026-11-28: 1.02x to 2.0x in one minute):
 * the rows that use two threads move with it.
 */
export interface Parallel {
  /** Two threads' work over one's: the median round's, the lowest, the highest. */
  ratio: number;
  low: number;
  high: number;
  /** One thread's slowest round over its fastest (1: a steady pace). */
  pace: number;
  rounds: number;
  ms: number;
  /**
   * A cache line's round trip between two threads after each round, ns:
   * the median, the lowest, the highest (absent from reports before
   * 2026-11-28 and from a bench_cores that does not print it). Where the
   * host puts the two vCPUs far apart, a thread reading what the other
   * has just written waits that much longer (core_roundtrip.h).
   */
  roundTrip?: { median: number; low: number; high: number };
}

/**
 * Text of a file under /proc or /sys. Deno refuses those to a plain read
 * grant (only --allow-all opens them), and `deno task bench` grants reads
 * and runs, not all: cat reads them then.
 */
async function systemText(path: string): Promise<string | undefined> {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    const out = await new Deno.Command("cat", {
      args: [path],
      stdout: "piped",
      stderr: "null",
    }).output().catch(() => undefined);
    return out?.success ? new TextDecoder().decode(out.stdout) : undefined;
  }
}

async function cpuModel(): Promise<string> {
  const info = await systemText("/proc/cpuinfo") ?? "";
  return /^model name\s*:\s*(.+)$/m.exec(info)?.[1].trim() ?? "unknown";
}

async function mitigations(): Promise<Record<string, string>> {
  const dir = "/sys/devices/system/cpu/vulnerabilities";
  let names: string[] = [];
  try {
    names = [...Deno.readDirSync(dir)].map((e) => e.name);
  } catch {
    // Listing is refused like reading: ls lists it then.
    const ls = await new Deno.Command("ls", {
      args: [dir],
      stdout: "piped",
      stderr: "null",
    }).output().catch(() => undefined);
    if (ls?.success) {
      names = new TextDecoder().decode(ls.stdout).split("\n").filter((n) => n);
    }
  }
  const out: Record<string, string> = {};
  for (const name of names.sort()) {
    const text = await systemText(`${dir}/${name}`);
    if (text !== undefined) out[name] = text.trim();
  }
  return out;
}

/** memcpy of 256 MiB as the watch rows time it, or Deno's copy when unbuilt. */
async function memcpyRate(): Promise<{ rate: number; by: string }> {
  const bin = workload("bench_dump");
  try {
    Deno.statSync(bin);
    const env = { STOMPWATCH_TEST_DEVICE_BYTES: String(512 << 20) };
    const { stdout } = await timeJob(undefined, bin, ["256", "3"], env);
    return {
      rate: 0.25 / (figure(stdout, "memcpy_ns") / 1e9),
      by: "bench_dump memcpy",
    };
  } catch {
    const a = new Uint8Array(256 << 20).fill(1), b = new Uint8Array(a.length);
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      b.set(a);
      times.push(performance.now() - t0);
    }
    return { rate: 0.25 / (median(times) / 1000), by: "Uint8Array.set" };
  }
}

/**
 * What a second thread adds now (see {@link Parallel}); undefined where
 * `bench_cores` is not built.
 *
 * @example
 * ```ts ignore
 * const p = await parallelWork();
 * ```
 */
export async function parallelWork(
  rounds = 5,
  ms = 200,
): Promise<Parallel | undefined> {
  const bin = workload("bench_cores");
  try {
    Deno.statSync(bin);
  } catch {
    return undefined;
  }
  const { stdout } = await timeJob(undefined, bin, [
    String(rounds),
    String(ms),
  ]);
  // A round trip of -1: no second thread could be started for it.
  const found = [...stdout.matchAll(/^round (\d+) (\d+)(?: (-?\d+))?$/gm)];
  const pairs = found.map((m) => [Number(m[1]), Number(m[2])] as const);
  const ratios = pairs.map(([one, two]) => two / one);
  const ones = pairs.map(([one]) => one);
  const trips = found.map((m) => Number(m[3] ?? NaN)).filter((t) => t >= 0);
  return {
    ratio: median(ratios),
    low: Math.min(...ratios),
    high: Math.max(...ratios),
    pace: Math.min(...ones) / Math.max(...ones),
    rounds,
    ms,
    ...(trips.length && {
      roundTrip: {
        median: median(trips),
        low: Math.min(...trips),
        high: Math.max(...trips),
      },
    }),
  };
}

/** A Parallel as the line machineLines prints. */
function parallelLine(when: string, p: Parallel): string {
  return `${when}: two threads did ${
    p.ratio.toFixed(2)
  }x one thread's work (median of ${p.rounds} rounds of ${p.ms} ms, ${
    p.low.toFixed(2)
  }-${p.high.toFixed(2)}x); one thread's slowest round ran at ${
    p.pace.toFixed(2)
  }x its fastest${
    p.roundTrip
      ? `; a cache line went from one thread to the other and back in ${p.roundTrip.median} ns (${p.roundTrip.low}-${p.roundTrip.high})`
      : ""
  }`;
}

async function ddRate(dir: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const dd = await new Deno.Command("dd", {
      args: ["if=/dev/zero", `of=${dir}/dd.bin`, "bs=1M", "count=256"],
      stderr: "null",
    }).output();
    if (!dd.success) throw new Error(`Cannot time dd: it failed in ${dir}`);
    times.push(performance.now() - t0);
  }
  Deno.removeSync(`${dir}/dd.bin`);
  return 0.25 / (median(times) / 1000);
}

/**
 * Measures the machine; `dir` is where dd writes (the bench's own directory).
 *
 * @example
 * ```ts
 * import { machine, machineLines } from "./_machine.ts";
 * const m = await machine(Deno.makeTempDirSync());
 * console.log(machineLines(m).join("\n"));
 * ```
 */
export async function machine(dir: string): Promise<Machine> {
  const memcpy = await memcpyRate();
  return {
    cpu: await cpuModel(),
    cores: navigator.hardwareConcurrency,
    kernel: Deno.osRelease(),
    mitigations: await mitigations(),
    memcpyGiBs: memcpy.rate,
    memcpyBy: memcpy.by,
    ddGiBs: await ddRate(dir),
    deno: Deno.version.deno,
    parallel: await parallelWork(),
  };
}

/** The machine as a few lines of text, printed above the table. */
export function machineLines(m: Machine): string[] {
  // Mitigations grouped by what they say, the common "Not affected" last.
  const byText = new Map<string, string[]>();
  for (const [name, text] of Object.entries(m.mitigations)) {
    byText.set(text, [...(byText.get(text) ?? []), name]);
  }
  const groups = [...byText].sort(([a], [b]) =>
    Number(a === "Not affected") - Number(b === "Not affected")
  );
  return [
    `machine: ${m.cpu}, ${m.cores} cores, Linux ${m.kernel}, Deno ${m.deno}`,
    `memcpy ${m.memcpyGiBs.toFixed(2)} GiB/s (${m.memcpyBy}, 256 MiB); dd ${
      m.ddGiBs.toFixed(2)
    } GiB/s (256 MiB of zeros into the bench directory)`,
    ...(m.parallel ? [parallelLine("before the first row", m.parallel)] : []),
    ...(m.parallelAtEnd
      ? [parallelLine("after the last row", m.parallelAtEnd)]
      : []),
    "CPU vulnerabilities (/sys/devices/system/cpu/vulnerabilities):",
    ...groups.map(([text, names]) => `  ${names.join(", ")}: ${text}`),
  ];
}
