/**
 * The registry of traced processes and the pump that feeds them: it finds
 * new rings in the ring directory, drains every ring, keeps the producers'
 * heartbeat fresh, and closes a process's files once it has exited and its
 * ring is empty. The pump yields to the HTTP server between rounds.
 *
 * @module
 */
import {
  attachRing,
  detachRing,
  listRings,
  pidAlive,
  removeFile,
} from "../ffi/bindings.ts";
import type { DumpWriter } from "../watch/dump_writer.ts";
import { RingReader } from "./ring_reader.ts";
import { type EventListener, TracedProcess } from "./traced_process.ts";

const SCAN_EVERY_MS = 50;
const HEARTBEAT_EVERY_MS = 200;
const IDLE_SLEEP_MS = 2;
const BUDGET_PER_ROUND = 1 << 16;
/**
 * An exited process whose ring has not moved for this long holds a record
 * the job reserved and never finished: nothing will finish it now.
 */
const TORN_AFTER_MS = 300;

/** Every process that has reported to this daemon, live or finished. */
export class Registry {
  readonly ringDir: string;
  readonly processes = new Map<number, TracedProcess>();
  #writer: DumpWriter;
  #listeners: EventListener[] = [];
  #running = false;
  #stopped: Promise<void> | undefined;
  #lastScan = 0;
  #lastBeat = 0;
  /** Since when each exited process's ring has not moved. */
  #stalledSince = new Map<TracedProcess, number>();
  /** Called when a new process is attached, before its first event. */
  onAttached: (p: TracedProcess) => void = () => {};
  /** Called after a process has been finished (files closed). */
  onFinished: (p: TracedProcess) => void = () => {};
  /** Called when a live process's watch table must be republished. */
  onTableChange: (p: TracedProcess) => void = () => {};
  /** Called after every pump round that read records (the log flushes). */
  onRound: () => void = () => {};
  /** Who waits for the end of the next round (see {@linkcode nextRound}). */
  #roundWaiters: Array<(ran: boolean) => void> = [];

  /** A registry over `ringDir`, writing samples through `writer`. */
  constructor(ringDir: string, writer: DumpWriter) {
    this.ringDir = ringDir;
    this.#writer = writer;
  }

  /** Adds a receiver of every event from every process. */
  listen(listener: EventListener): void {
    this.#listeners.push(listener);
  }

  /** Attaches rings that appeared since the last scan. */
  scan(): void {
    for (const name of listRings(this.ringDir) ?? []) {
      const m = /^(\d+)\.ring$/.exec(name);
      if (!m) continue;
      const pid = Number(m[1]);
      const known = this.processes.get(pid);
      if (known && !known.finished) continue;
      const ring = attachRing(`${this.ringDir}/${name}`);
      if (!ring) continue;
      const p = new TracedProcess(
        new RingReader(ring),
        this.#writer,
        this.#listeners,
      );
      p.onWatchClosed = () => this.onTableChange(p);
      this.onAttached(p);
      this.processes.set(pid, p);
    }
  }

  /**
   * Resolves after the pump's next round, with false when the pump is not
   * running. Only the pump reads rings: an HTTP handler that needs fresh
   * state waits for it. With `scan`, that round also looks for new rings.
   */
  nextRound(options: { scan?: boolean } = {}): Promise<boolean> {
    if (!this.#running) return Promise.resolve(false);
    if (options.scan) this.#lastScan = -Infinity;
    return new Promise((resolve) => this.#roundWaiters.push(resolve));
  }

  /** One round over every ring; returns the records read. */
  pumpOnce(budget = BUDGET_PER_ROUND): number {
    const n = this.#round(budget);
    if (this.#roundWaiters.length) {
      for (const resolve of this.#roundWaiters.splice(0)) resolve(true);
    }
    return n;
  }

  #round(budget: number): number {
    const now = Date.now();
    if (now - this.#lastScan >= SCAN_EVERY_MS) {
      this.#lastScan = now;
      this.scan();
      this.#reapDead();
    }
    const beat = now - this.#lastBeat >= HEARTBEAT_EVERY_MS;
    if (beat) this.#lastBeat = now;
    let n = 0;
    for (const p of this.processes.values()) {
      if (p.finished) continue;
      if (beat) p.reader.heartbeat();
      const read = p.pump(budget);
      n += read;
      if (!p.exited) continue;
      if (p.reader.empty()) this.#finish(p);
      else if (read > 0) this.#stalledSince.delete(p);
      else this.#finishIfTorn(p, now);
    }
    if (n > 0) this.onRound();
    return n;
  }

  /** Runs the pump until {@linkcode stop}. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    // setTimeout(0) is clamped to milliseconds; a message is a macrotask
    // that lets the HTTP server in without the wait.
    const channel = new MessageChannel();
    const yieldTurn = () =>
      new Promise<void>((resolve) => {
        channel.port1.onmessage = () => resolve();
        channel.port2.postMessage(0);
      });
    this.#stopped = (async () => {
      while (this.#running) {
        const n = this.pumpOnce();
        if (n > 0) await yieldTurn();
        else await new Promise((r) => setTimeout(r, IDLE_SLEEP_MS));
      }
      channel.port1.close();
      channel.port2.close();
    })();
  }

  /** Stops the pump, drains what is left and closes every process's files. */
  async stop(): Promise<void> {
    this.#running = false;
    await this.#stopped;
    while (this.pumpOnce() > 0) { /* drain */ }
    for (const resolve of this.#roundWaiters.splice(0)) resolve(false);
    for (const p of this.processes.values()) {
      if (!p.finished) this.#finish(p, false);
    }
  }

  /** A process killed without running its exit handler leaves no PROC_EXIT. */
  #reapDead(): void {
    for (const p of this.processes.values()) {
      if (p.finished || p.exited) continue;
      if (!pidAlive(p.pid)) p.exited = true;
    }
  }

  /**
   * Finishes an exited process whose ring stopped at a record it reserved
   * and never finished, once it is gone for sure: the rest of its ring
   * counts as dropped.
   */
  #finishIfTorn(p: TracedProcess, now: number): void {
    const since = this.#stalledSince.get(p);
    if (since === undefined) this.#stalledSince.set(p, now);
    if (since === undefined || now - since < TORN_AFTER_MS) return;
    if (pidAlive(p.pid)) return;
    const bytes = p.lostTail();
    console.error(
      `stompwatch: pid ${p.pid} died while writing an event: the last ${bytes} bytes of its ring cannot be read and count as 1 dropped event`,
    );
    this.#finish(p);
  }

  #finish(p: TracedProcess, removeRing = true): void {
    this.#stalledSince.delete(p);
    p.settle();
    p.finished = true;
    p.exited = p.exited || removeRing;
    this.#writer.closeProcess(p.pid);
    detachRing(p.reader.ring);
    if (removeRing) removeFile(`${this.ringDir}/${p.pid}.ring`);
    this.onFinished(p);
  }
}
