/**
 * A snapshot as a byte stream (`GET /snapshot`): written as the reader
 * pulls, a few thousand rows' worth at a time, so that the file never sits
 * in memory and a slow client holds back the conversion, not the heap.
 *
 * @module
 */
import {
  type SnapshotOptions,
  snapshotSteps,
  type SnapshotSummary,
} from "./convert.ts";
import { JsonWriter, PickleWriter } from "./emit.ts";
import type { MemoryRows } from "./rows.ts";

/** A snapshot being streamed, and its summary once the stream ended. */
export interface SnapshotStream {
  stream: ReadableStream<Uint8Array<ArrayBuffer>>;
  /** Settles when the last byte was pulled (rejects if the stream was cancelled). */
  summary: Promise<SnapshotSummary>;
}

/**
 * The snapshot of `rows` in `format` as a stream. Throws the options'
 * `RangeError` (a device the rows do not name) here, before any byte.
 *
 * @example
 * ```ts
 * import { readMemoryRows } from "./rows.ts";
 * import { snapshotStream } from "./stream.ts";
 * const rows = await readMemoryRows("memscope_dump.csv");
 * const { stream } = snapshotStream(rows, "pickle", { maxEntries: 500000 });
 * await stream.pipeTo((await Deno.create("snap.pickle")).writable);
 * ```
 */
export function snapshotStream(
  rows: MemoryRows,
  format: "pickle" | "json",
  options: SnapshotOptions = {},
): SnapshotStream {
  const ready: Uint8Array<ArrayBuffer>[] = [];
  // The writer reuses its buffer: each flushed part is copied once.
  const sink = (b: Uint8Array) => void ready.push(b.slice());
  const w = format === "json" ? new JsonWriter(sink) : new PickleWriter(sink);
  const steps = snapshotSteps(rows, w, options);
  steps.next(); // checks the options
  let done: (s: SnapshotSummary) => void;
  let failed: (e: unknown) => void;
  const summary = new Promise<SnapshotSummary>((resolve, reject) => {
    done = resolve;
    failed = reject;
  });
  // Unobserved when the caller only wants the bytes.
  summary.catch(() => {});
  let ended = false;
  const stream = new ReadableStream<Uint8Array<ArrayBuffer>>({
    pull(controller) {
      try {
        while (ready.length === 0 && !ended) {
          const step = steps.next();
          if (step.done) {
            ended = true;
            done(step.value);
          }
        }
      } catch (e) {
        failed(e);
        throw e;
      }
      for (const part of ready.splice(0)) controller.enqueue(part);
      if (ended) controller.close();
    },
    cancel(reason) {
      steps.return(undefined as never);
      failed(reason ?? new Error("Snapshot stream cancelled"));
    },
  });
  return { stream, summary };
}
