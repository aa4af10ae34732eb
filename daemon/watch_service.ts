/**
 * The daemon's implementation of the API's {@linkcode WatchService}: checks
 * each request against what the ring has told us about the process, keeps
 * the watch books, and republishes a process's watch table on every change.
 *
 * @module
 */
import { publishWatchTable } from "../ffi/bindings.ts";
import type { DumpWriter } from "../watch/dump_writer.ts";
import type { IoProblem } from "../watch/io_problems.ts";
import { hexAddr, type WatchEntry, watchInfo } from "../watch/watch_book.ts";
import {
  type BlockFilter,
  type BlockList,
  type DumpFilter,
  type DumpInfo,
  type HealthInfo,
  type ProcessInfo,
  type RemoveRequest,
  ServiceError,
  type WatchInfo,
  type WatchRequest,
  type WatchService,
} from "../watch/types.ts";
import type { Registry } from "./registry.ts";
import { caughtUp, type TracedProcess } from "./traced_process.ts";

function unknownPid(pid: number, registry: Registry): never {
  const known = [...registry.processes.keys()].join(", ") || "none";
  throw new ServiceError(
    "not_found",
    `Unknown pid: ${pid} is not a traced process (traced: ${known}); see GET /processes`,
  );
}

function exitedError(pid: number): never {
  throw new ServiceError(
    "conflict",
    `Cannot change watches: pid ${pid} has exited`,
  );
}

/** Facts about the daemon for GET /health. */
export interface DaemonFacts {
  outputDir: string;
  ringDir: string;
  version: string;
  /** Files the daemon cannot write, listed as `ioProblems`. */
  ioProblems?: () => IoProblem[];
}

/** Watch service over a live registry. */
export class DaemonWatchService implements WatchService {
  readonly dumpDir: string;
  #registry: Registry;
  #writer: DumpWriter;
  #facts: DaemonFacts;

  /** Serves `registry`'s processes. */
  constructor(registry: Registry, writer: DumpWriter, facts: DaemonFacts) {
    this.#registry = registry;
    this.#writer = writer;
    this.#facts = facts;
    this.dumpDir = writer.dir;
  }

  health(): HealthInfo & { ioProblems: IoProblem[] } {
    const { ioProblems, ...facts } = this.#facts;
    const eventGaps = [...this.#registry.processes.values()].flatMap((p) =>
      p.gaps
    );
    return {
      ...facts,
      pid: Deno.pid,
      eventGaps,
      ioProblems: ioProblems?.() ?? [],
    };
  }

  listProcesses(): ProcessInfo[] {
    return [...this.#registry.processes.values()].map((p) => ({
      pid: p.pid,
      command: p.header.command,
      launchBlocking: p.launchBlocking,
      cliWatch: p.header.cliWatch,
      startedAt: p.startedAt.toISOString(),
      exited: p.exited,
      finished: p.finished,
      droppedEvents: p.droppedEvents(),
      liveAllocations: p.memory.live.count,
      liveBytes: p.memory.live.bytes,
    }));
  }

  async listBlocks(pid: number, filter: BlockFilter): Promise<BlockList> {
    let p = this.#registry.processes.get(pid);
    if (!p && await this.#registry.nextRound({ scan: true })) {
      p = this.#registry.processes.get(pid);
    }
    if (!p) unknownPid(pid, this.#registry);
    // Blocks allocated before the request was made are listed.
    await caughtUp(p, () => this.#registry.nextRound());
    return {
      pid,
      liveAllocations: p.memory.live.count,
      ...p.blocks(filter),
    };
  }

  async addWatch(req: WatchRequest): Promise<WatchInfo> {
    const p = await this.#live(req.pid);
    if (!p.launchBlocking) {
      throw new ServiceError(
        "conflict",
        `Cannot watch block: pid ${p.pid} runs with ASCEND_LAUNCH_BLOCKING off, so ops run asynchronously and dumps would not bracket them; restart the job through ./stompwatch run or with ASCEND_LAUNCH_BLOCKING=1`,
      );
    }
    // The block may have been allocated a moment ago: let the pump read
    // what the ring holds now.
    await caughtUp(p, () => this.#registry.nextRound());
    if (p.exited || p.finished) exitedError(p.pid);
    const addr = Number(req.addr), length = Number(req.length);
    const { inside, nearest } = p.locate(addr, length);
    if (!inside) {
      const near = nearest
        ? `; nearest live block is ${
          hexAddr(nearest.addr)
        } (${nearest.size} bytes) on device ${nearest.device}`
        : "; it has no live allocations";
      throw new ServiceError(
        "not_live",
        `Cannot watch block: ${
          hexAddr(req.addr)
        } (+${length} bytes) is not inside one live allocation of pid ${p.pid}${near}`,
      );
    }
    const entry = p.book.add(req);
    entry.device = inside.device;
    entry.host = inside.pool === "HOST";
    this.publish(p);
    return watchInfo(entry);
  }

  async removeWatch(req: RemoveRequest): Promise<WatchInfo[]> {
    const procs = req.pid !== undefined
      ? [await this.#live(req.pid)]
      : this.#liveProcesses();
    const match = "name" in req
      ? (w: WatchEntry) => w.name === req.name
      : (w: WatchEntry) =>
        w.addr < Number(req.addr) + Number(req.length) &&
        Number(req.addr) < w.addr + w.length;
    const removed: WatchInfo[] = [];
    for (const p of procs) {
      const gone = p.book.remove((w) => w.source === "api" && match(w));
      if (gone.length) this.publish(p);
      removed.push(...gone.map((w) => watchInfo(w)));
    }
    if (!removed.length) {
      const what = "name" in req
        ? `named ${req.name}`
        : `overlapping ${hexAddr(req.addr)} (+${req.length} bytes)`;
      throw new ServiceError(
        "not_found",
        `Cannot remove watch: no live watch ${what}; list them with GET /watches`,
      );
    }
    return removed;
  }

  listWatches(): WatchInfo[] {
    return [...this.#registry.processes.values()].flatMap((p) =>
      p.book.all().map((w) => watchInfo(w, p.exited || p.finished))
    );
  }

  findWatches(name: string): WatchInfo[] {
    return this.listWatches().filter((w) => w.name === name).reverse();
  }

  listDumps(filter: DumpFilter): DumpInfo[] {
    return this.#writer.list(filter);
  }

  #liveProcesses(): TracedProcess[] {
    return [...this.#registry.processes.values()].filter((p) => !p.finished);
  }

  /** The live process `pid`; one that started a moment ago is looked for by the pump's next round. */
  async #live(pid: number): Promise<TracedProcess> {
    let p = this.#registry.processes.get(pid);
    if (!p && await this.#registry.nextRound({ scan: true })) {
      p = this.#registry.processes.get(pid);
    }
    if (!p) unknownPid(pid, this.#registry);
    if (p.finished || p.exited) exitedError(pid);
    return p;
  }

  /** Writes `p`'s live API watches into its ring's watch table (the daemon calls it when the hook closed one). */
  publish(p: TracedProcess): void {
    if (p.finished) return;
    publishWatchTable(p.reader.ring, p.book.apiLive());
  }
}
