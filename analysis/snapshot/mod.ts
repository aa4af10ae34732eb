/**
 * Memory snapshots that pytorch.org/memory_viz opens (SPEC section 8), from
 * any event log: pickle protocol 4 or JSON, streamed.
 *
 * @example
 * ```ts
 * import { createSnapshotFile, writeSnapshot } from "./mod.ts";
 * await createSnapshotFile("snap.pickle", "pickle", (w) =>
 *   writeSnapshot("memscope_dump.csv", w));
 * ```
 *
 * @module
 */
export {
  type Frame,
  JsonWriter,
  PickleWriter,
  type SnapshotWriter,
} from "./emit.ts";
export {
  type SnapshotOptions,
  snapshotSteps,
  type SnapshotSummary,
  writeRowsSnapshot,
  writeSnapshot,
} from "./convert.ts";
export { type SnapshotStream, snapshotStream } from "./stream.ts";
export { createSnapshotFile } from "./file.ts";
export { MemoryRows, parseFrames, readMemoryRows } from "./rows.ts";
