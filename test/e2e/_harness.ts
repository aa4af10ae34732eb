/**
 * Shared pieces of the end-to-end tests: the real ./stompwatch, the real
 * hook and the test device runtime's workloads, run as separate processes.
 *
 * @module
 */
export { requestSocket } from "../../daemon/socket_client.ts";

const root = new URL("../../", import.meta.url).pathname;

/** The command users type. */
export const STOMPWATCH = `${root}stompwatch`;

/** A workload binary built by make -C ffi. */
export function workload(name: string): string {
  return `${root}ffi/build/testing/workloads/${name}`;
}

/** A fresh private temporary directory. */
export function tempDir(): string {
  return Deno.makeTempDirSync({ prefix: "stompwatch_test_" });
}

/** Runs ./stompwatch (or `program`, a copy's) to completion. */
export async function stompwatch(
  args: string[],
  env: Record<string, string> = {},
  program = STOMPWATCH,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(program, {
    args,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

/** A process whose stdout lines can be awaited. */
export class Spawned {
  readonly child: Deno.ChildProcess;
  #lines: string[] = [];
  #waiters: Array<() => void> = [];
  readonly done: Promise<Deno.CommandStatus>;
  stderr = "";

  constructor(cmd: string, args: string[], env: Record<string, string> = {}) {
    this.child = new Deno.Command(cmd, {
      args,
      env,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const pump = async (
      stream: ReadableStream<Uint8Array>,
      onLine: (l: string) => void,
    ) => {
      let buf = "";
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
        buf += chunk;
        let i;
        while ((i = buf.indexOf("\n")) >= 0) {
          onLine(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
      }
      if (buf) onLine(buf);
    };
    const outDone = pump(this.child.stdout, (l) => {
      this.#lines.push(l);
      this.#waiters.splice(0).forEach((w) => w());
    });
    const errDone = pump(this.child.stderr, (l) => this.stderr += l + "\n");
    this.done = Promise.all([outDone, errDone]).then(() => this.child.status);
  }

  /** Resolves with the first stdout line matching `re`. */
  async line(re: RegExp, timeoutMs = 20_000): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const l of this.#lines) {
        const m = re.exec(l);
        if (m) return m;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `No line matching ${re} in ${timeoutMs} ms; stdout: ${
            this.#lines.join("\n")
          }; stderr: ${this.stderr}`,
        );
      }
      await new Promise<void>((r) => {
        this.#waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  get stdout(): string {
    return this.#lines.join("\n");
  }
}

/** Starts `./stompwatch daemon` and waits until its socket answers. */
export async function startDaemonProcess(
  output: string,
  extra: string[] = [],
): Promise<Spawned> {
  const d = new Spawned(STOMPWATCH, ["daemon", "--output", output, ...extra]);
  await d.line(/listening on/);
  return d;
}

/** Polls `check` until it returns a value, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error("Condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Reads the checksum CSV rows of a dump directory as [tensorInfo, checksum]. */
export function checksumRows(dumpDir: string): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  for (const e of Deno.readDirSync(dumpDir)) {
    if (!e.name.startsWith("watch_dump_data_check_sum_")) continue;
    const lines = Deno.readTextFileSync(`${dumpDir}/${e.name}`).trim().split(
      "\n",
    );
    if (lines[0] !== "Tensor info,Check data sum") {
      throw new Error(`Bad header in ${e.name}`);
    }
    for (const l of lines.slice(1)) rows.push(l.split(",") as [string, string]);
  }
  return rows;
}

/** Little-endian float32 bytes of `n` copies of `value`. */
export function floats(n: number, value: number): Uint8Array {
  return new Uint8Array(new Float32Array(n).fill(value).buffer);
}
