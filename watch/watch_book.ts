/**
 * The watches of one traced process as the daemon keeps them: those asked
 * for over HTTP (which the hook reads from the ring's watch table) and the
 * windows the job's own --watch spec opened. Each carries its verdict.
 *
 * @module
 */
import { WatchVerdict } from "./verdict.ts";
import { ServiceError, type WatchInfo, type WatchRequest } from "./types.ts";
import { MAX_API_WATCHES } from "./limits.ts";
import { sanitizeNamePart } from "./dump_names.ts";

/** One watch of one process. */
export interface WatchEntry {
  id: number;
  name: string;
  pid: number;
  addr: number;
  length: number;
  dumpNums: number;
  fullContent: boolean;
  /** The block is host memory (set by the daemon from its allocation's pool). */
  host?: boolean;
  start?: string;
  end?: string;
  outid: number;
  source: "api" | "cli";
  state: WatchInfo["state"];
  device: number | null;
  dumpsTaken: number;
  verdict: WatchVerdict;
  /** Times the daemon stopped reading while the watch was live. */
  gaps?: number;
  /** Samples whose bytes could not be read (the copy failed). */
  unreadSamples?: number;
}

/**
 * Formats an address the way users paste it back; give a bigint for one
 * that came from a request, which may lie beyond 2^53.
 *
 * @example
 * ```ts
 * import { hexAddr } from "./watch_book.ts";
 * hexAddr(0x124080000000); // "0x124080000000"
 * hexAddr(0xffff800000000001n); // "0xffff800000000001"
 * ```
 */
export function hexAddr(addr: number | bigint): string {
  return "0x" + addr.toString(16).padStart(12, "0");
}

/** The watch book of one process. */
export class WatchBook {
  readonly pid: number;
  #entries = new Map<number, WatchEntry>();
  /** The waiting and active ones: lookups must not grow with history. */
  #live = new Map<number, WatchEntry>();
  #nextId = 1;

  /** An empty book. */
  constructor(pid: number) {
    this.pid = pid;
  }

  /**
   * The live watch whose dump files `name` would overwrite: names that
   * differ only where file names turn characters into "." (`c/d`, `c.d`)
   * write the same files.
   */
  clashOf(name: string): WatchEntry | undefined {
    const key = sanitizeNamePart(name);
    return this.live().find((w) => sanitizeNamePart(w.name) === key);
  }

  /**
   * The name for a CLI window opened at call `callCount` of op `start`: the
   * op's name, or, while a live watch already writes files under it,
   * `{start}.{callCount}` (then `.2`, `.3`... in the rare case that is taken
   * too), so no two live watches ever write the same file.
   */
  windowName(start: string, callCount: number): string {
    if (!this.clashOf(start)) return start;
    let name = `${start}.${callCount}`;
    for (let n = 2; this.clashOf(name); n++) {
      name = `${start}.${callCount}.${n}`;
    }
    return name;
  }

  /** Adds an API watch; the caller validated the range. */
  add(req: WatchRequest): WatchEntry {
    const clash = this.clashOf(req.name);
    if (clash) {
      const why = clash.name === req.name
        ? ""
        : `, whose dump files would have the same names ("/" and control characters become "." in file names)`;
      throw new ServiceError(
        "conflict",
        `Cannot watch block: pid ${this.pid} already has a watch named ${
          JSON.stringify(clash.name)
        }${why}; remove it first or pick another name`,
      );
    }
    if (this.apiLive().length >= MAX_API_WATCHES) {
      throw new ServiceError(
        "conflict",
        `Cannot watch block: pid ${this.pid} has ${MAX_API_WATCHES} watches; remove some first`,
      );
    }
    const entry: WatchEntry = {
      id: this.#nextId++,
      name: req.name,
      pid: this.pid,
      addr: Number(req.addr),
      length: Number(req.length),
      dumpNums: req.dumpNums,
      fullContent: req.fullContent,
      start: req.start,
      end: req.end,
      outid: 0,
      source: "api",
      state: req.start ? "waiting" : "active",
      device: null,
      dumpsTaken: 0,
      verdict: new WatchVerdict(),
    };
    this.#entries.set(entry.id, entry);
    this.#live.set(entry.id, entry);
    return entry;
  }

  /** Records a window the job's --watch spec opened. */
  openWindow(
    id: number,
    w: {
      name: string;
      addr: number;
      length: number;
      outid: number;
      device: number;
      fullContent: boolean;
    },
  ): WatchEntry {
    const entry: WatchEntry = {
      id,
      pid: this.pid,
      dumpNums: -1,
      source: "cli",
      state: "active",
      dumpsTaken: 0,
      verdict: new WatchVerdict(),
      ...w,
    };
    this.#entries.set(id, entry);
    this.#live.set(id, entry);
    return entry;
  }

  /** The entry the hook calls `id`. */
  get(id: number): WatchEntry | undefined {
    return this.#entries.get(id);
  }

  /** Every watch, in the order they were made. */
  all(): WatchEntry[] {
    return [...this.#entries.values()];
  }

  /** Watches still waiting or active. */
  live(): WatchEntry[] {
    return [...this.#live.values()];
  }

  /** What the hook's watch table must hold: every live API watch. */
  apiLive(): WatchEntry[] {
    return this.live().filter((w) => w.source === "api");
  }

  /** The hook ended a window (end op seen, or dump_nums ran out). */
  closed(id: number): boolean {
    const w = this.#entries.get(id);
    if (!w || w.state === "removed" || w.state === "closed") return false;
    w.state = "closed";
    this.#live.delete(id);
    return w.source === "api";
  }

  /** Removes live watches by name or by overlapping range; returns them. */
  remove(match: (w: WatchEntry) => boolean): WatchEntry[] {
    const gone = this.live().filter(match);
    for (const w of gone) {
      w.state = "removed";
      this.#live.delete(w.id);
    }
    return gone;
  }
}

/**
 * The public view of a watch. Once its process has exited a watch still
 * waiting or active can take no more samples and cannot be removed: it
 * shows as `ended`.
 *
 * @example
 * ```ts
 * import { watchInfo, type WatchEntry } from "./watch_book.ts";
 * export function stateAfterExit(entry: WatchEntry): string {
 *   return watchInfo(entry, true).state; // "ended" if waiting or active
 * }
 * ```
 */
export function watchInfo(w: WatchEntry, processExited = false): WatchInfo {
  const first = w.verdict.firstChange;
  const live = w.state === "waiting" || w.state === "active";
  return {
    name: w.name,
    pid: w.pid,
    device: w.device,
    addr: hexAddr(w.addr),
    length: w.length,
    dumpNums: w.dumpNums,
    dumpsTaken: w.dumpsTaken,
    fullContent: w.fullContent,
    ...(w.start ? { start: w.start } : {}),
    ...(w.end ? { end: w.end } : {}),
    outid: w.outid,
    source: w.source,
    state: processExited && live ? "ended" : w.state,
    first_change: first,
    stomp: w.verdict.stomp,
    changes: w.verdict.changes,
    ...(w.gaps ? { gaps: w.gaps } : {}),
    ...(w.unreadSamples ? { unreadSamples: w.unreadSamples } : {}),
  };
}
