/**
 * `stompwatch snapshot`: an event log (ours or msMemScope's) to a snapshot
 * that pytorch.org/memory_viz opens. Options are read and checked here; the
 * file is written under a name no file had (an existing one is refused,
 * never replaced). No printing here; main.ts prints.
 *
 * @module
 */
import { shownText } from "../analysis/shown_text.ts";
import { parseCommandArgs } from "./_args.ts";
// Straight from the files, not the folders' faces: a command loads only
// what it runs (the TypeScript converter only where the native one may not
// be loaded), since start-up is part of every conversion.
import {
  type EventLogFile,
  openEventLog,
} from "../analysis/memscope_csv/open.ts";
import type {
  SnapshotOptions,
  SnapshotSummary,
} from "../analysis/snapshot/convert.ts";
import { createSnapshotFileNative } from "../analysis/snapshot/native.ts";
import { removingPartsOnSignal } from "./_signals.ts";
import { nativeSnapshotAllowed } from "../ffi/bindings.ts";

/** A mistake in the command line or the input, said in one line. */
export class SnapshotCliError extends Error {}

const FLAGS = "--input, -o/--output, --device, --pid, --format, --max-entries";
/** Beyond these a browser struggles (PYTORCH.md section 4). */
const BROWSER_ENTRIES = 600_000;
const BROWSER_BYTES = 1 << 30;

function count(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new SnapshotCliError(
      `Invalid ${name} value: ${text}; give a whole number of 0 or more`,
    );
  }
  return Number(text);
}

const VALUED = [
  "--input",
  "--output",
  "-o",
  "--device",
  "--pid",
  "--max-entries",
];

/** The TypeScript converter, loaded only where the native one may not be. */
async function convertInTypeScript(
  log: { file: EventLogFile; label: string },
  output: string,
  format: "pickle" | "json",
  options: SnapshotOptions,
): Promise<{ summary: SnapshotSummary; bytes: number }> {
  const { writeSnapshot } = await import("../analysis/snapshot/convert.ts");
  const { createSnapshotFile } = await import("../analysis/snapshot/file.ts");
  return await createSnapshotFile(
    output,
    format,
    (w) => writeSnapshot(log, w, options),
  );
}

/**
 * Runs the command; returns the lines to print (stdout, then warnings for
 * stderr). Bad input throws {@link SnapshotCliError} or the reader's
 * `MemscopeCsvError`.
 *
 * @example
 * ```ts
 * import { snapshotCli } from "./snapshot.ts";
 * const { lines } = await snapshotCli(["--input", "dump.csv", "-o", "s.pickle"]);
 * console.log(lines.join("\n"));
 * ```
 */
export async function snapshotCli(
  args: string[],
): Promise<{ lines: string[]; warnings: string[] }> {
  const { values } = parseCommandArgs(args, {
    options: {
      input: { type: "string" },
      output: { type: "string", short: "o" },
      device: { type: "string" },
      pid: { type: "string" },
      format: { type: "string" },
      "max-entries": { type: "string" },
    },
    valued: VALUED,
    command: "snapshot",
    flags: FLAGS,
    fail: (m) => new SnapshotCliError(m),
  });
  const input = values.input as string | undefined;
  if (!input) {
    throw new SnapshotCliError(
      "Missing --input: give an event log, e.g. --input OUT/device_0/memscope_dump_20250101120000.csv",
    );
  }
  const output = values.output as string | undefined;
  if (!output) {
    throw new SnapshotCliError(
      "Missing -o: give the snapshot file to write, e.g. -o snap.pickle",
    );
  }
  const format = (values.format as string | undefined) ?? "pickle";
  if (format !== "pickle" && format !== "json") {
    throw new SnapshotCliError(
      `Invalid --format value: ${format}; use pickle (default) or json`,
    );
  }
  const device = count("--device", values.device as string | undefined);
  const pid = count("--pid", values.pid as string | undefined);
  const maxEntries = count(
    "--max-entries",
    values["max-entries"] as string | undefined,
  );
  // Opened here for its refusals (missing, unreadable, not a file); the
  // converter reads the path it names.
  using log = await openEventLog(input);
  using _ = removingPartsOnSignal();
  let summary;
  let bytes: number;
  try {
    ({ summary, bytes } = nativeSnapshotAllowed()
      ? await createSnapshotFileNative([input], output, format, {
        device,
        maxEntries,
        pid,
        labels: [log.label],
        // Off the event loop, so that Ctrl-C is heard while it runs.
        background: true,
      })
      : await convertInTypeScript(log, output, format, {
        device,
        maxEntries,
        pid,
      }));
  } catch (e) {
    if (e instanceof RangeError) {
      throw new SnapshotCliError(
        `${e.message}; ${
          pid !== undefined && e.message.includes(`pid ${pid}`)
            ? "leave out --pid, or give a pid of its Process Id column"
            : / wider than 8 bytes$|cannot be converted to a BigInt/.test(
                e.message,
              )
            // A value of the log (a size, a line) no pickle the viewer
            // reads can hold (PYTORCH.md section 4); JSON holds any.
            ? "the log holds a number memory_viz reads from no pickle: write JSON instead with --format json"
            : "pick one with --device"
        }`,
      );
    }
    throw e;
  }
  const lines = [
    `stompwatch: wrote ${
      shownText(output)
    }: ${summary.entries} trace entries, ${summary.segments} live segment${
      summary.segments === 1 ? "" : "s"
    }, ${summary.devices} device${summary.devices === 1 ? "" : "s"}${
      summary.cpuDevice !== undefined
        ? ` (CPU memory is device ${summary.cpuDevice})`
        : ""
    }`,
  ];
  if (summary.dropped) {
    lines.push(
      `stompwatch: --max-entries ${maxEntries} dropped the ${summary.dropped} oldest trace entries`,
    );
  }
  if (summary.freedBeforeLog) {
    lines.push(
      `stompwatch: ${summary.freedBeforeLog} frees of memory allocated before the log began (drawn as allocated before the trace)`,
    );
  }
  if (summary.overlapped) {
    lines.push(
      `stompwatch: ${summary.overlapped} live allocations were overlapped by a later one and taken as freed then (a free the log lost, or another process at the same address: pick one with --pid)`,
    );
  }
  if (summary.skipped) {
    lines.push(
      `stompwatch: ${summary.skipped} rows left out (no address or size, an address past 2^53, or a free whose device the log does not tell)`,
    );
  }
  const warnings: string[] = [];
  if (summary.entries > BROWSER_ENTRIES || bytes > BROWSER_BYTES) {
    // --max-entries counts each device's entries: the devices together
    // keep about 500,000.
    const each = Math.max(
      1000,
      Math.floor(500_000 / summary.devices / 1000) * 1000,
    );
    warnings.push(
      `stompwatch: warning: ${output} has ${summary.entries} trace entries (${
        (bytes / 2 ** 20).toFixed(0)
      } MiB); browsers struggle past about 600,000 entries or 1 GB: keep the newest with --max-entries ${each}${
        summary.devices > 1 ? " (a device)" : ""
      }, or pick one device with --device`,
    );
  }
  return { lines, warnings };
}
