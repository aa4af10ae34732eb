/**
 * OOM snapshots, written by the daemon: when an allocation of a traced
 * process fails and its job asked for them (OOM_SNAPSHOT_ENABLE 1 or 2,
 * which the hook puts in the ring header with the absolute
 * OOM_SNAPSHOT_PATH), the daemon flushes the event log and writes the
 * snapshot and the memUsageInfo CSV from it. The job may abort right after
 * its failed allocation: the files do not depend on it.
 *
 * @module
 */
import type { TracedEvent } from "../analysis/events.ts";
import { writeOomFiles } from "../analysis/snapshot/oom.ts";
import type { EventLog } from "./event_log.ts";
import type { Registry } from "./registry.ts";

/** One OOM's files, or why they could not be written. */
export interface OomFiles {
  pid: number;
  device: number;
  snapshot?: string;
  usage?: string;
  error?: string;
}

/**
 * Watches every event for failed allocations. One snapshot per process is
 * written at a time: failures while it is written (an allocator retrying
 * after freeing its cache) are in the same history and make no new file.
 *
 * @example
 * ```ts
 * import { OomSnapshots } from "./oom_snapshots.ts";
 * import type { EventLog } from "./event_log.ts";
 * import type { Registry } from "./registry.ts";
 * export async function follow(registry: Registry, log: EventLog) {
 *   const oom = new OomSnapshots(registry, log);
 *   registry.listen(oom.onEvent);
 *   await oom.settled(); // before the log closes
 * }
 * ```
 */
export class OomSnapshots {
  readonly written: OomFiles[] = [];
  #registry: Registry;
  #log: EventLog;
  #busy = new Map<number, Promise<void>>();
  /** Called with each OOM's files (the daemon prints them). */
  onWritten: (f: OomFiles) => void = () => {};

  constructor(registry: Registry, log: EventLog) {
    this.#registry = registry;
    this.#log = log;
  }

  /** The event listener. */
  onEvent = (e: TracedEvent): void => {
    if (e.kind !== "alloc" || e.result === 0) return;
    if (this.#busy.has(e.pid)) return;
    const p = this.#registry.processes.get(e.pid);
    const mode = p?.header.oomSnapshot;
    if (!p || (mode !== 1 && mode !== 2) || !p.header.oomPath) return;
    // The state at the failure: what the job did after it is left out.
    const job = {
      pid: e.pid,
      device: e.device,
      at: new Date(e.ts / 1e6),
      untilNs: e.ts,
    };
    const dir = p.header.oomPath;
    // After this event has reached the log's buffer: the pump's round ends first.
    const done = Promise.resolve().then(async () => {
      const files: OomFiles = { pid: job.pid, device: job.device };
      try {
        const log = this.#log.pathOf(job.pid, job.device);
        // The snapshot holds every device of the process, as PyTorch's.
        const logs = this.#log.logsOf(job.pid);
        if (!log) throw new Error(`no event log of device ${job.device}`);
        Object.assign(
          files,
          await writeOomFiles({ ...job, log, logs, mode, dir }),
        );
      } catch (e) {
        files.error =
          `Cannot write the OOM snapshot of pid ${job.pid} into ${dir}: ${
            (e as Error).message.split("\n")[0]
          }`;
      }
      this.written.push(files);
      this.onWritten(files);
    }).finally(() => this.#busy.delete(job.pid));
    this.#busy.set(e.pid, done);
  };

  /** Resolves once every snapshot begun is written. */
  async settled(): Promise<void> {
    while (this.#busy.size) await Promise.allSettled(this.#busy.values());
  }
}
