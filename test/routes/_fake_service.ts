/**
 * An in-memory {@linkcode WatchService} for route tests: it records every
 * call, keeps watches in a list, and throws `failWith` when set.
 */

import type {
  BlockFilter,
  BlockInfo,
  BlockList,
  DumpFilter,
  DumpInfo,
  ProcessInfo,
  RemoveRequest,
  WatchInfo,
  WatchRequest,
  WatchService,
} from "../../watch/types.ts";
import { ServiceError } from "../../watch/types.ts";
import { createApp } from "../../routes/mod.ts";

export const PROCESS: ProcessInfo = {
  pid: 4242,
  command: "./train",
  launchBlocking: true,
  cliWatch: "",
  startedAt: "2026-11-20T23:17:33.000Z",
  exited: false,
  finished: false,
  droppedEvents: 0,
  liveAllocations: 3,
  liveBytes: 12288,
};

export const BLOCK: BlockInfo = {
  addr: "0x0012c0000000",
  size: 4096,
  device: 0,
  pool: "HAL",
  owner: null,
  op: "Fill",
  call: "aclrtMalloc",
  ageMs: 1200,
  allocationId: 3,
  step: 1,
};

/** A watch as the daemon would show it. */
export function watchInfo(name: string, pid = 4242): WatchInfo {
  return {
    name,
    pid,
    device: 0,
    addr: "0x12c0000",
    length: 4096,
    dumpNums: -1,
    dumpsTaken: 0,
    fullContent: false,
    outid: 0,
    source: "api",
    state: "active",
    first_change: null,
    stomp: false,
    changes: [],
  };
}

export class FakeService implements WatchService {
  readonly dumpDir: string;
  watches: WatchInfo[] = [];
  dumps: DumpInfo[] = [];
  calls: [string, unknown][] = [];
  failWith: Error | undefined;

  constructor(dumpDir = "/nonexistent/watch_dump") {
    this.dumpDir = dumpDir;
  }

  /** Records the call; throws `failWith` (async methods await it, as a real round trip would). */
  #call(method: string, arg?: unknown): void {
    this.calls.push([method, arg]);
    if (this.failWith !== undefined) throw this.failWith;
  }

  listProcesses(): ProcessInfo[] {
    this.#call("listProcesses");
    return [PROCESS];
  }

  async listBlocks(pid: number, filter: BlockFilter): Promise<BlockList> {
    await this.#call("listBlocks", { pid, filter });
    return { pid, liveAllocations: 3, matched: 1, blocks: [BLOCK] };
  }

  async addWatch(req: WatchRequest): Promise<WatchInfo> {
    await this.#call("addWatch", req);
    const info = {
      ...watchInfo(req.name, req.pid),
      addr: `0x${req.addr.toString(16)}`,
      length: Number(req.length),
    };
    this.watches.push(info);
    return info;
  }

  async removeWatch(req: RemoveRequest): Promise<WatchInfo[]> {
    await this.#call("removeWatch", req);
    const hit = (w: WatchInfo) =>
      (req.pid === undefined || w.pid === req.pid) &&
      ("name" in req
        ? w.name === req.name
        : BigInt(w.addr) === req.addr && BigInt(w.length) === req.length);
    const removed = this.watches.filter(hit);
    if (removed.length === 0) {
      throw new ServiceError("not_found", "Unknown watch: nothing matched");
    }
    this.watches = this.watches.filter((w) => !hit(w));
    return removed.map((w) => ({ ...w, state: "removed" as const }));
  }

  listWatches(): WatchInfo[] {
    this.#call("listWatches");
    return this.watches;
  }

  findWatches(name: string): WatchInfo[] {
    this.#call("findWatches", name);
    return this.watches.filter((w) => w.name === name);
  }

  listDumps(filter: DumpFilter): DumpInfo[] {
    this.#call("listDumps", filter);
    return this.dumps.filter((d) =>
      (filter.name === undefined || d.name === filter.name) &&
      (filter.op === undefined || d.op === filter.op) &&
      (filter.pid === undefined || d.pid === filter.pid)
    );
  }

  health() {
    this.#call("health");
    return {
      outputDir: "/out",
      ringDir: "/out/rings",
      pid: 99,
      version: "0.1.0",
    };
  }
}

/** An app over a fresh fake, quiet about internal errors. */
export function setup(options: { token?: string; dumpDir?: string } = {}) {
  const service = new FakeService(options.dumpDir);
  const logged: unknown[] = [];
  const app = createApp(service, {
    token: options.token,
    logError: (e) => logged.push(e),
  });
  return { app, service, logged };
}

/** POSTs a JSON body (or raw text) and returns status and parsed body. */
export async function post(
  app: ReturnType<typeof createApp>,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await app.request(path, {
    method: "POST",
    body: typeof body === "string" ? body : JSON.stringify(body),
    headers,
  });
  return { status: response.status, json: await response.json() };
}

/** GETs and returns status and parsed JSON body. */
export async function get(
  app: ReturnType<typeof createApp>,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await app.request(path, { headers });
  return { status: response.status, json: await response.json() };
}
