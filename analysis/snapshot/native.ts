/**
 * Snapshot files made by the native converter (`ffi/analysis/`,
 * `libstompwatch_analysis.so`): the same bytes as {@link writeSnapshot}
 * through a `PickleWriter` or `JsonWriter`, several times faster, with the
 * same refusals (`MemscopeCsvError` for a file that is not an event log,
 * `RangeError` for an option the log refutes).
 *
 * @module
 */
import {
  convertSnapshotNative,
  convertSnapshotNativeAsync,
  type NativeSnapshotResult,
} from "../../ffi/bindings.ts";
import { MemscopeCsvError } from "../memscope_csv/header.ts";
import type { SnapshotOptions, SnapshotSummary } from "./convert.ts";
import { createNewFile, systemReason } from "./file.ts";

/**
 * Creates the snapshot file `path` of the event logs `inputs` (one, or
 * several files of one process, read in turn), refusing an existing file as
 * `createSnapshotFile` does. `labels` name the inputs in messages; a `pid`
 * with no memory rows is refused, as `writeSnapshot` refuses it, unless
 * `emptyPid` is allowed. `background` converts on a thread of Deno's (the
 * daemon's event loop goes on).
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
  options: SnapshotOptions & {
    labels?: string[];
    /** Per input, whether its host rows are read (default all). */
    hostRows?: boolean[];
    untilNs?: number;
    emptyPid?: boolean;
    background?: boolean;
  } = {},
): Promise<{ summary: SnapshotSummary; bytes: number }> {
  return await createNewFile(path, async (_file, part) => {
    const req = {
      inputs,
      labels: options.labels,
      hostRows: options.hostRows,
      output: part,
      format,
      device: options.device,
      pid: options.pid,
      maxEntries: options.maxEntries,
      untilNs: options.untilNs,
      history: options.history,
      refuseEmptyPid: !options.emptyPid,
    };
    const r: NativeSnapshotResult = options.background
      ? await convertSnapshotNativeAsync(req)
      : convertSnapshotNative(req);
    if (!r.ok) {
      // The converter writes the part file: the file it stands for is
      // named here, with what the system said.
      const io = /^Cannot write the snapshot: (.*)$/.exec(r.message);
      throw r.kind === "csv"
        ? new MemscopeCsvError(r.message)
        : r.kind === "range"
        ? new RangeError(r.message)
        : io
        ? new Error(`Cannot write ${path}: ${systemReason(io[1])}`)
        : new Error(r.message);
    }
    return { summary: r.summary, bytes: r.bytes };
  });
}

/**
 * The snapshot of event logs as a stream of its bytes, for an HTTP body:
 * converted in native code, on a thread of Deno's, into a private
 * temporary file that is opened and removed before its first byte is read
 * (the snapshot is on disk while it is sent, never in memory). Throws what
 * {@link createSnapshotFileNative} throws, before the stream exists; a
 * `pid` without memory rows gives an empty snapshot.
 *
 * @example
 * ```ts
 * import { snapshotFileStream } from "./native.ts";
 * const body = await snapshotFileStream(["memscope_dump.csv"], "json", {
 *   pid: 4242,
 * });
 * ```
 */
export async function snapshotFileStream(
  inputs: string[],
  format: "pickle" | "json",
  options: SnapshotOptions & { hostRows?: boolean[] } = {},
): Promise<ReadableStream<Uint8Array<ArrayBuffer>>> {
  const dir = await Deno.makeTempDir({ prefix: "stompwatch_snapshot_" });
  try {
    const path = `${dir}/snapshot.${format}`;
    await createSnapshotFileNative(inputs, path, format, {
      ...options,
      emptyPid: true,
      background: true,
    });
    const file = await Deno.open(path, { read: true });
    return file.readable;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
