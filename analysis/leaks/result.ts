/**
 * What check_leaks finds, as data: per device, its window and its leaks.
 *
 * @module
 */
import type { Window } from "./_leak_rows.ts";

export type { Window };

/** One block allocated between A and B and still not freed at C. */
export interface Leak {
  /** ID of the MALLOC row. */
  id: number;
  /** The ID as written (` 12`, `+12`), as the real tool prints it. */
  index: string;
  /** Ptr as the file writes it. */
  ptr: string;
  bytes: number;
  /** bytes / 2^20, as the real tool prints it. */
  mb: number;
  timestamp: string;
  pid: number;
  tid: number;
  /** Attr `owner` (`A@B@C`) when the row has one. */
  owner?: string;
  /** Line of the MALLOC row in the file. */
  line: number;
}

/** What was found on one device. */
export interface DeviceLeaks {
  /** Device Id as written. */
  device: string;
  /**
   * `leaks` or `clean` when the window was checked; `too-few-marks` (fewer
   * than 3), `start-out-of-bounds` (not 3 marks from startIndex on).
   */
  status: "leaks" | "clean" | "too-few-marks" | "start-out-of-bounds";
  /** Marks named mstxInfo on this device. */
  marks: number;
  /** IDs of A, B and C when the window was checked. */
  window?: Window;
  /** The leaks, by ID; all of them unless `unlisted` is non-zero. */
  leaks: Leak[];
  /** Every leak's bytes, listed or not. */
  leakedBytes: number;
  /** Leaks found but left out of `leaks` (see `maxLeaks`). */
  unlisted: number;
}

/** The whole check. */
export interface CheckLeaksResult {
  input: string;
  mstxInfo: string;
  startIndex: number;
  /** The start index as its user wrote it (digits past 2^53 kept). */
  startIndexText: string;
  eventType: string;
  /** Devices in the order they first appear in the log, as msMemScope. */
  devices: DeviceLeaks[];
  leakCount: number;
  leakedBytes: number;
  /** Data rows and bytes read (first pass). */
  rows: number;
  bytes: number;
  /**
   * Whole reads of the log: 1 when its memory rows fit the row budget, 2
   * when those inside the windows did, more when they were read in parts
   * (the ID passes for duplicated IDs included).
   */
  passes: number;
}
