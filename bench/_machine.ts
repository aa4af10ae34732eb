/**
 * The machine a bench ran on, measured once up front so that figures from
 * two machines can be read side by side: CPU model, cores, kernel, the
 * kernel's CPU vulnerability mitigations (they change the cost of every
 * system call and context switch), and the memcpy and dd rates the watch
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
    "CPU vulnerabilities (/sys/devices/system/cpu/vulnerabilities):",
    ...groups.map(([text, names]) => `  ${names.join(", ")}: ${text}`),
  ];
}
