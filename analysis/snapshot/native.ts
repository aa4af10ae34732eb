/**
 * Snapshot files made by the native converter (`ffi/analysis/`,
 * `libstompwatch_analysis.so`): the same bytes as {@link writeSnapshot}
 * through a `PickleWriter` or `JsonWriter`, several times faster, with the
 * same refusals (`MemscopeCsvError` for a file that is not an event log,
 * `RangeError` for an option the log refutes).
 *
 * @module
 */
import { convertSnapshotNative } from "../../ffi/bindings.ts";
import { MemscopeCsvError } from "../memscope_csv/mod.ts";
import type { SnapshotOptions, SnapshotSummary } from "./convert.ts";
import { createNewFile } from "./file.ts";

/**
 * Creates the snapshot file `path` of the event logs `inputs` (one, or
 * several files of one process, read in turn), refusing an existing file as
 * `createSnapshotFile` does. `labels` name the inputs in messages.
 *
 * @example
 * ```ts
 * import { createSnapshotFileNative } from "./native.ts";
 * const { summary } = await createSnapshotFileNative(
 *   ["memscope_dump.csv"], "snap.pickle", "pickle");
 * console.log(summary.entries);
 * ```
 */
export async function createSnapshotFileNative(
  inputs: string[],
  path: string,
  format: "pickle" | "json",
  options: SnapshotOptions & { labels?: string[]; untilNs?: number } = {},
): Promise<{ summary: SnapshotSummary; bytes: number }> {
  return await createNewFile(path, (_file, part) => {
    const r = convertSnapshotNative({
      inputs,
      labels: options.labels,
      output: part,
      format,
      device: options.device,
      pid: options.pid,
      maxEntries: options.maxEntries,
      untilNs: options.untilNs,
      history: options.history,
    });
    if (!r.ok) {
      throw r.kind === "csv"
        ? new MemscopeCsvError(r.message)
        : r.kind === "range"
        ? new RangeError(r.message)
        : new Error(r.message);
    }
    return { summary: r.summary, bytes: r.bytes };
  });
}
