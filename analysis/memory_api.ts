/**
 * What the HTTP API asks of the daemon's memory analyses (marks, online
 * leaks, fluctuation, check_leaks); the daemon implements it, route tests
 * fake it.
 *
 * @module
 */
import type { CheckLeaksResult } from "./leaks/mod.ts";
import type { LeakSuspect, StepFluctuation } from "./leaks/mod.ts";

/** The online analyses of one traced process. */
export interface ProcessMemory {
  pid: number;
  /** Current step (ranges named `step start`), 0 before the first. */
  step: number;
  suspects: LeakSuspect[];
  fluctuation: StepFluctuation[];
}

/** A `POST /check_leaks` request. */
export interface CheckLeaksRequest {
  /** A log file; none means the daemon's own live log (every device). */
  inputPath?: string;
  mstxInfo: string;
  startIndex: number;
  eventType: string;
}

/** A `GET /snapshot` request. */
export interface SnapshotRequest {
  pid: number;
  /** Only this device; default every device the process used. */
  device?: number;
  format: "pickle" | "json";
  /** Keep at most this many trace entries per device, the newest. */
  maxEntries?: number;
}

/** The memory side of the daemon. */
export interface MemoryService {
  /** Writes a mark into the log of `pid`, or of every live process; returns the pids marked. */
  mark(message: string, pid?: number): Promise<number[]>;
  /** Online analyses, of one process or all. */
  memory(pid?: number): ProcessMemory[];
  /** check_leaks over a file or the daemon's own log (one result per file). */
  checkLeaks(request: CheckLeaksRequest): Promise<CheckLeaksResult[]>;
  /**
   * A memory_viz snapshot of a process's memory now, with its history, as
   * a stream written while it is read.
   */
  snapshot(
    request: SnapshotRequest,
  ): Promise<ReadableStream<Uint8Array<ArrayBuffer>>>;
}
