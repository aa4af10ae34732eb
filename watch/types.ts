/**
 * The watch domain as the daemon exposes it to routes: what a traced process,
 * a watch, a dump and a verdict look like, and the service interface routes
 * call. The daemon implements {@linkcode WatchService}; routes only see this.
 *
 * @module
 */
import type { Pool } from "../analysis/events.ts";

/** A traced process as registered through its ring. */
export interface ProcessInfo {
  pid: number;
  command: string;
  /** ASCEND_LAUNCH_BLOCKING=1 was in force when the hook started. */
  launchBlocking: boolean;
  /** The job's `--watch` value, "" when none. */
  cliWatch: string;
  startedAt: string;
  exited: boolean;
  /** Exited and every record it sent has been read and written out. */
  finished: boolean;
  /** Records the hook could not deliver because the daemon was gone or stalled. */
  droppedEvents: number;
  liveAllocations: number;
  liveBytes: number;
}

/** Narrows `GET /processes/{pid}/blocks`. */
export interface BlockFilter {
  device?: number;
  pool?: Pool;
  /** Blocks of at least this many bytes. */
  minSize?: number;
  /** At most this many blocks, the newest. */
  limit: number;
}

/** A live allocation of a traced process, as `GET /processes/{pid}/blocks` shows it. */
export interface BlockInfo {
  /** Hex, as `POST /watch` takes it. */
  addr: string;
  size: number;
  device: number;
  pool: Pool;
  /** Who owns it (msMemScope's `owner`), where the allocator says; null otherwise. */
  owner: string | null;
  /** The op the process launched last before allocating it; null before any op. */
  op: string | null;
  /** The runtime call that allocated it (aclrtMalloc...); null where not known. */
  call: string | null;
  /** Milliseconds since it was allocated. */
  ageMs: number;
  /** Per process, from 1, in allocation order. */
  allocationId: number;
  /** The step it was allocated in. */
  step: number;
}

/** The answer of `GET /processes/{pid}/blocks`. */
export interface BlockList {
  pid: number;
  /** Live blocks of the process, before filtering. */
  liveAllocations: number;
  /** Blocks that pass the filter; `blocks` holds the newest `limit` of them. */
  matched: number;
  blocks: BlockInfo[];
}

/** What `POST /watch` asks for, validated at the edge. */
export interface WatchRequest {
  pid: number;
  name: string;
  addr: bigint;
  length: bigint;
  /** -1 is unlimited; otherwise at least 1. Counts before/after pairs. */
  dumpNums: number;
  fullContent: boolean;
  /** Window opens at this op instead of now. */
  start?: string;
  /** Window closes after this op instead of at remove. */
  end?: string;
}

/** What `POST /remove` asks for: a name, or an address range. */
export type RemoveRequest =
  | { name: string; pid?: number }
  | { addr: bigint; length: bigint; pid?: number };

/** The first change seen in a watched block. */
export interface FirstChange {
  /** The op whose before and after differ; for a change between ops, the op after it. */
  op: string;
  call_count: number;
  before_file: string;
  after_file: string;
  /** True when the change happened between two ops, not inside one. */
  outside_op?: boolean;
  /** For a change outside any op: the op whose after was the last clean sample. */
  previous_op?: string;
  previous_call_count?: number;
  /**
   * True when the op may write part of the block but changed bytes beside
   * that part (a write past the end of an output into the same storage).
   */
  beyond_writable?: boolean;
}

/** One change of a watched block, in order of observation. */
export interface Change extends FirstChange {
  /** The op was allowed to write the block (it overlaps one of its outputs). */
  allowed: boolean;
}

/** A watch as `GET /watches` shows it. */
export interface WatchInfo {
  name: string;
  pid: number;
  device: number | null;
  addr: string;
  length: number;
  dumpNums: number;
  dumpsTaken: number;
  fullContent: boolean;
  start?: string;
  end?: string;
  outid: number;
  source: "api" | "cli";
  /**
   * `waiting` for its start op, `active`, `closed` by its end op or
   * dump_nums, `removed` over the API, or `ended` with its process.
   */
  state: "waiting" | "active" | "closed" | "removed" | "ended";
  /** The first unexpected change if any, else the first change, else null. */
  first_change: FirstChange | null;
  /** True when first_change was made by an op not allowed to write the block, or outside any op. */
  stomp: boolean;
  changes: Change[];
  /**
   * Times the daemon stopped reading while the watch was live (absent when
   * none): samples of that time are lost, so no change proves less.
   */
  gaps?: number;
  /**
   * Samples whose bytes could not be read (absent when none): the block was
   * freed, or its device memory could not be copied; no change between
   * them and their neighbours is seen.
   */
  unreadSamples?: number;
}

/** One file in the dump directory. */
export interface DumpInfo {
  file: string;
  kind: "bin" | "checksum_csv";
  pid: number;
  device: number;
  tid?: number;
  op?: string;
  callCount?: number;
  name?: string;
  phase?: "before" | "after";
  bytes: number;
}

/** Narrows `GET /dumps`. */
export interface DumpFilter {
  name?: string;
  op?: string;
  pid?: number;
}

/**
 * What went wrong with a request to a service, for the edge to answer
 * with: `invalid` (the request itself is wrong), `not_found` (no such pid,
 * watch or file), `conflict` (the state forbids it now: a name taken, a
 * process gone), `not_live` (the address is not inside a live block).
 */
export type ServiceErrorKind =
  | "invalid"
  | "not_found"
  | "conflict"
  | "not_live"
  | "unavailable";

/**
 * An error whose message a person can act on. Services throw it; routes
 * decide the HTTP status from its kind.
 */
export class ServiceError extends Error {
  /** What kind of failure this is. */
  readonly kind: ServiceErrorKind;
  /**
   * @example
   * ```ts
   * const e = new ServiceError("not_found", "Unknown pid: 4242 is not a traced process");
   * ```
   */
  constructor(kind: ServiceErrorKind, message: string) {
    super(message);
    this.kind = kind;
  }
}

/** What GET /health tells a caller who may see the daemon's files. */
export interface HealthInfo {
  outputDir: string;
  ringDir: string;
  pid: number;
  version: string;
  /** Times the daemon did not read a job's events and the job lost some, oldest first. */
  eventGaps?: EventGap[];
}

/** A time the daemon did not read a process's ring, as `GET /health` lists it. */
export interface EventGap {
  pid: number;
  /** When the hook traced again (or the process ended), ISO 8601. */
  at: string;
  /** How long the daemon's heartbeat stood still; null when the job ended before it moved. */
  silentMs: number | null;
  /** Events the job emitted meanwhile that are not in the event log. */
  lostEvents: number;
}

/** What the daemon offers the HTTP API. Methods throw {@linkcode ServiceError}. */
export interface WatchService {
  listProcesses(): ProcessInfo[];
  /**
   * The live blocks of `pid`, newest first, once the pump has read what its
   * ring held when asked; throws not_found for an unknown pid.
   */
  listBlocks(pid: number, filter: BlockFilter): Promise<BlockList>;
  /** Waits for the pump to read what the process's ring holds now, then adds. */
  addWatch(req: WatchRequest): Promise<WatchInfo>;
  removeWatch(req: RemoveRequest): Promise<WatchInfo[]>;
  listWatches(): WatchInfo[];
  /** All watches with this name (one per pid at most), newest first. */
  findWatches(name: string): WatchInfo[];
  listDumps(filter: DumpFilter): DumpInfo[];
  /** Absolute path of OUT/watch_dump. */
  readonly dumpDir: string;
  /** Daemon facts for GET /health; the route passes on every field. */
  health(): HealthInfo;
}
