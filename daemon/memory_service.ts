/**
 * The memory side of the daemon: online leak and fluctuation analysis of
 * every traced process, marks from outside the job, and check_leaks over a
 * log file or the daemon's own log.
 *
 * @module
 */
import {
  CheckLeaksError,
  checkLeaksFile,
  type CheckLeaksResult,
} from "../analysis/leaks/mod.ts";
import { MemscopeCsvError } from "../analysis/memscope_csv/mod.ts";
import type {
  CheckLeaksRequest,
  MemoryService,
  ProcessMemory,
  SnapshotRequest,
} from "../analysis/memory_api.ts";
import {
  MemoryRows,
  readMemoryRows,
  snapshotStream,
} from "../analysis/snapshot/mod.ts";
import { snapshotFileStream } from "../analysis/snapshot/native.ts";
import { nativeSnapshotAllowed } from "../ffi/bindings.ts";
import { ServiceError } from "../watch/types.ts";
import type { EventLog } from "./event_log.ts";
import type { Registry } from "./registry.ts";
import { caughtUp, type TracedProcess } from "./traced_process.ts";

function unknownPid(pid: number): never {
  throw new ServiceError(
    "not_found",
    `Unknown pid: ${pid} is not a traced process (GET /processes lists them)`,
  );
}

/** Memory analyses over a live registry. */
export class DaemonMemoryService implements MemoryService {
  #registry: Registry;
  #log: EventLog | undefined;
  /** Where suspects found at a step end are told (the daemon's stderr). */
  warn: (line: string) => void = (line) => console.error(`stompwatch: ${line}`);

  /** Analyses `registry`'s processes; `log` is the daemon's event log. */
  constructor(registry: Registry, log: EventLog | undefined) {
    this.#registry = registry;
    this.#log = log;
  }

  /** Tells {@linkcode warn} of every suspect `p` shows at a step end (the daemon calls it for each new process). */
  follow(p: TracedProcess): void {
    p.memory.onSuspect = (s) =>
      this.warn(
        `pid ${s.pid}: possible ${s.pool} leak of ${s.bytes} bytes at 0x${
          s.addr.toString(16)
        } (allocated in step ${s.step}, still live at the end of step ${p.memory.step})`,
      );
  }

  async mark(message: string, pid?: number): Promise<number[]> {
    const targets = [...this.#registry.processes.values()].filter((p) =>
      pid === undefined ? !p.finished : p.pid === pid
    );
    if (pid !== undefined && targets.length === 0) unknownPid(pid);
    if (pid !== undefined && targets[0].finished) {
      throw new ServiceError(
        "conflict",
        `Cannot mark pid ${pid}: it has exited and its log is closed`,
      );
    }
    const marked: number[] = [];
    for (const p of targets) {
      // After every event its ring held when the mark was asked for.
      await caughtUp(p, () => this.#registry.nextRound());
      if (p.finished) continue; // its log closed meanwhile
      p.mark(message);
      marked.push(p.pid);
    }
    this.#log?.flush();
    return marked;
  }

  memory(pid?: number): ProcessMemory[] {
    if (pid !== undefined && !this.#registry.processes.has(pid)) {
      unknownPid(pid);
    }
    return [...this.#registry.processes.values()]
      .filter((p) => pid === undefined || p.pid === pid)
      .map(({ pid, memory }) => ({
        pid,
        step: memory.step,
        suspects: memory.suspects(),
        fluctuation: memory.fluctuation(),
      }));
  }

  async snapshot(
    request: SnapshotRequest,
  ): Promise<ReadableStream<Uint8Array<ArrayBuffer>>> {
    const { pid, device, format, maxEntries } = request;
    const p = this.#registry.processes.get(pid);
    if (!p) unknownPid(pid);
    if (!this.#log) {
      throw new ServiceError(
        "conflict",
        "This daemon keeps no event log to make a snapshot from",
      );
    }
    // Everything the job's ring held when asked for is in the log.
    await caughtUp(p, () => this.#registry.nextRound());
    // Each of the process's device logs holds copies of its host rows
    // (only the first device's all of them), and host/ holds those of a
    // process with no device yet: each host row is read from one log.
    const logs = this.#log.logsOf(pid);
    const files = device === undefined
      ? logs
      : logs.filter((f) => f.device === device);
    const hostRows = files.map((f) => device === undefined ? f.hostRows : true);
    if (device !== undefined && !files.length) {
      throw new ServiceError(
        "not_found",
        `No memory of device ${device} in the log: pid ${pid} has not used it (GET /processes/${pid}/blocks lists its blocks)`,
      );
    }
    try {
      // The native converter unless this process may not load it.
      if (nativeSnapshotAllowed()) {
        return await snapshotFileStream(
          files.map((f) => f.path),
          format,
          { pid, device, maxEntries, hostRows },
        );
      }
      const rows = new MemoryRows();
      for (const [k, f] of files.entries()) {
        await readMemoryRows(f.path, {
          pid,
          into: rows,
          hostRows: hostRows[k],
        });
      }
      return snapshotStream(rows, format, { device, maxEntries }).stream;
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      throw new ServiceError("not_found", e.message);
    }
  }

  async checkLeaks(request: CheckLeaksRequest): Promise<CheckLeaksResult[]> {
    let paths: string[];
    if (request.inputPath !== undefined) {
      paths = [request.inputPath];
    } else {
      if (!this.#log) {
        throw new ServiceError(
          "conflict",
          "This daemon keeps no event log: give input_path",
        );
      }
      this.#log.flush();
      paths = this.#log.files().filter((f) => f.device !== "host").map((f) =>
        f.path
      );
      if (paths.length === 0) {
        throw new ServiceError(
          "conflict",
          "The daemon's log has no device rows yet: run a job first, or give input_path",
        );
      }
    }
    const results: CheckLeaksResult[] = [];
    for (const path of paths) {
      try {
        results.push(
          await checkLeaksFile(path, {
            mstxInfo: request.mstxInfo,
            startIndex: request.startIndex,
            eventType: request.eventType,
          }),
        );
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) {
          throw new ServiceError(
            "invalid",
            `Cannot read input_path: ${path} does not exist`,
          );
        }
        if (e instanceof Deno.errors.PermissionDenied) {
          throw new ServiceError(
            "invalid",
            `Cannot read input_path: ${path} is not readable by the daemon`,
          );
        }
        if (e instanceof CheckLeaksError || e instanceof MemscopeCsvError) {
          throw new ServiceError("invalid", (e as Error).message);
        }
        throw e;
      }
    }
    return results;
  }
}
