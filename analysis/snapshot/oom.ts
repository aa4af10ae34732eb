/**
 * The files torch_npu writes when a job runs out of device memory (SPEC
 * section 7, seed 000): `oom_snapshot_{pid}_{YYYYmmddHHMMSS}.pickle`, the
 * memory_viz snapshot of the process, and
 * `device_{dev}_memUsageInfo_{YYYYmmddHHMMSS}.csv`, current and peak MB per
 * component. Both come from the event log, so they hold what it holds,
 * and both take a name no file has (the next second's when it is taken).
 *
 * @module
 */
import { fileStamp, writeAll } from "../files.ts";
import {
  csvField,
  type MemscopeRow,
  readMemscopeCsv,
} from "../memscope_csv/mod.ts";
import { nativeSnapshotAllowed } from "../../ffi/bindings.ts";
import { createSnapshotFileNative } from "./native.ts";
import { writeRowsSnapshot } from "./convert.ts";
import { MemoryRows, readMemoryRows, RUNTIME_POOLS } from "./rows.ts";
import { createSnapshotFile } from "./file.ts";

/** What an OOM snapshot is made of. */
export interface OomRequest {
  /** The event log of the device that ran out (flushed): the usage CSV's. */
  log: string;
  /**
   * Every log of the process (flushed), for the snapshot, which holds all
   * of its devices as PyTorch's does; `hostRows` on the one log to read its
   * host rows from (each device log holds copies). Default: `log` alone.
   */
  logs?: ReadonlyArray<{ path: string; hostRows: boolean }>;
  pid: number;
  device: number;
  /** OOM_SNAPSHOT_ENABLE: 1 state and history, 2 state only. */
  mode: 1 | 2;
  /** OOM_SNAPSHOT_PATH, absolute. */
  dir: string;
  /** When the allocation failed: names the files. */
  at: Date;
  /** Its timestamp in the log (ns): later rows are left out. */
  untilNs: number;
}

/** One component's memory, in bytes. */
export interface Usage {
  name: string;
  current: number;
  peak: number;
}

const HEADER = "moduleName,curMemSize(MB),memPeakSize(MB)";

/**
 * Current and peak bytes of each component of a process, fed its MALLOC
 * and FREE rows in file order: the owner an allocator or `describer` gave
 * the block (Attr `owner`), else the pool (`HAL` for runtime allocations
 * with no owner).
 *
 * @example
 * ```ts
 * import { readMemscopeCsv } from "../memscope_csv/mod.ts";
 * import { MemoryUsage } from "./oom.ts";
 * const usage = new MemoryUsage();
 * await readMemscopeCsv("memscope_dump.csv", (r) => usage.add(r));
 * console.log(usage.list());
 * ```
 */
export class MemoryUsage {
  #live = new Map<number, { usage: Usage; size: number }>();
  #byName = new Map<string, Usage>();

  add = (row: MemscopeRow): void => {
    const event = row.event;
    if (event !== "MALLOC" && event !== "FREE") return;
    // Allocator blocks lie inside runtime allocations: keep them apart.
    const ptr = Number(row.ptr);
    const addr = RUNTIME_POOLS.has(row.eventType) ? ptr : -1 - ptr;
    const live = this.#live;
    if (event === "FREE") {
      const b = live.get(addr);
      if (!b) return;
      live.delete(addr);
      b.usage.current -= b.size;
      return;
    }
    const size = row.size ?? 0;
    const name = row.owner ?? row.eventType;
    let usage = this.#byName.get(name);
    if (!usage) this.#byName.set(name, usage = { name, current: 0, peak: 0 });
    const old = live.get(addr);
    if (old) old.usage.current -= old.size;
    live.set(addr, { usage, size });
    usage.current += size;
    if (usage.current > usage.peak) usage.peak = usage.current;
  };

  /** Components by peak, largest first. */
  list(): Usage[] {
    return [...this.#byName.values()].sort((a, b) => b.peak - a.peak);
  }
}

/** The memUsageInfo CSV text: MB to 4 decimals, as torch_npu writes it. */
export function memUsageCsv(usage: Usage[]): string {
  const mb = (n: number) => (n / 2 ** 20).toFixed(4);
  return [
    HEADER,
    ...usage.map((u) => `${csvField(u.name)},${mb(u.current)},${mb(u.peak)}`),
    "",
  ].join("\n");
}

/** A device as OOM files name it: its number, or `cpu` for host memory (-1). */
export function deviceName(device: number): string {
  return device < 0 ? "cpu" : String(device);
}

async function free(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return false;
  } catch {
    return true;
  }
}

/**
 * Writes both files into `dir`; returns their paths.
 *
 * @example
 * ```ts
 * import { writeOomFiles } from "./oom.ts";
 * const { snapshot, usage } = await writeOomFiles({
 *   log: "OUT/device_0/memscope_dump_20260101000000.csv", pid: 4242,
 *   device: 0, mode: 1, dir: "/data/oom", at: new Date(), untilNs: 1.7e18,
 * });
 * ```
 */
export async function writeOomFiles(
  req: OomRequest,
): Promise<{ snapshot: string; usage: string }> {
  const counter = new MemoryUsage();
  const logs = req.logs ?? [{ path: req.log, hostRows: true }];
  // The usage CSV is the failing device's: its log's rows of the process,
  // up to the failure, host rows too.
  await readMemscopeCsv(req.log, (row) => {
    const event = row.event;
    if (event !== "MALLOC" && event !== "FREE") return;
    if (row.pid !== req.pid || Number(row.timestamp) > req.untilNs) return;
    counter.add(row);
  }, { startsWith: { Event: "MF" } });
  // The snapshot holds every log of the process, each host row once: the
  // native converter reads them, or (not granted it) the rows are read here.
  let rows: MemoryRows | undefined;
  if (!nativeSnapshotAllowed()) {
    rows = new MemoryRows();
    for (const l of logs) {
      await readMemoryRows(l.path, {
        pid: req.pid,
        into: rows,
        untilNs: req.untilNs,
        hostRows: l.hostRows,
      });
    }
  }
  const usage = counter.list();
  for (let s = 0;; s++) {
    const stamp = fileStamp(new Date(req.at.getTime() + s * 1000));
    const snapshot = `${req.dir}/oom_snapshot_${req.pid}_${stamp}.pickle`;
    const csv = `${req.dir}/device_${
      deviceName(req.device)
    }_memUsageInfo_${stamp}.csv`;
    if (!await free(snapshot) || !await free(csv)) continue;
    try {
      if (rows) {
        await createSnapshotFile(
          snapshot,
          "pickle",
          (w) => writeRowsSnapshot(rows, w, { history: req.mode === 1 }),
        );
      } else {
        await createSnapshotFileNative(
          logs.map((l) => l.path),
          snapshot,
          "pickle",
          {
            hostRows: logs.map((l) => l.hostRows),
            pid: req.pid,
            untilNs: req.untilNs,
            history: req.mode === 1,
            emptyPid: true,
            background: true,
          },
        );
      }
      using f = await Deno.open(csv, {
        write: true,
        createNew: true,
        mode: 0o600,
      });
      writeAll(f, new TextEncoder().encode(memUsageCsv(usage)));
    } catch (e) {
      if (e instanceof Deno.errors.AlreadyExists) continue; // taken meanwhile
      throw e;
    }
    return { snapshot, usage: csv };
  }
}
