/**
 * check_leaks' first pass in native code (`ffi/daemon/leak_scan.c`): the
 * same devices, marks and rows as `_first_pass.ts`, without handing each
 * row to JavaScript. Undefined where the native pass cannot give the same
 * answer for certain (it says so rather than guess): the caller then runs
 * the TypeScript pass. The passes after it, natively:
 * `_native_window_pass.ts`.
 *
 * @module
 */
import type { EventLogSource } from "../memscope_csv/read.ts";
import type { FirstPass } from "./_first_pass.ts";
import { LeakRows, PtrKeys } from "./_leak_rows.ts";
import type { CheckedOptions } from "./options.ts";
import { nativeFd, scan } from "./_native_scan.ts";
import { LEAK_FREED_BYTES } from "../../ffi/bindings.ts";

/**
 * The fewest bytes a memory row of an msMemScope log takes: an ID, MALLOC
 * or FREE, an event type, a Device Id and a Ptr, one byte each but the
 * event's, and the commas of its other fields (`1,FREE,H,,,,,0,0`).
 */
const MIN_ROW_BYTES = 18;

/**
 * The first pass natively, or undefined to run the TypeScript one.
 *
 * @example
 * ```ts ignore
 * const first = await nativeFirstPass(log, checked) ?? await firstPass(log, checked);
 * ```
 */
export async function nativeFirstPass(
  source: EventLogSource,
  options: CheckedOptions,
): Promise<FirstPass | undefined> {
  const native = nativeFd(source);
  if (native === undefined) return undefined;
  const size = await native.log.file.seek(0, Deno.SeekMode.End);
  // Room for a row every 64 bytes, as the TypeScript pass sizes them
  // (untouched room costs address space), and where the rows kept pass it
  // (a log of short rows, all in a window), room for every row there can
  // be: run again rather than leave the log to the TypeScript pass (52 MB
  // of 50-byte rows took it 1.0 s, and this retry 0.5).
  const withRoom = async (rowBytes: number) => {
    const spare = new LeakRows(
      options.rowBudget,
      Math.ceil(size / rowBytes),
      { halves: true },
    );
    // Its pages are touched only where the rows pass the budget: a pass
    // that keeps every row adds no FREE to them.
    const freed = new Uint8Array(LEAK_FREED_BYTES);
    const pass = await scan(native, options, { size, rows: spare, freed });
    return { spare, freed, pass };
  };
  let first = await withRoom(64);
  if (first.pass?.found.rowsFull) first = await withRoom(MIN_ROW_BYTES);
  const { spare, freed, pass } = first;
  if (pass === undefined) return undefined;
  const { found, markDevice, markId, header } = pass;
  if (found.fallback || new Set(found.devices).size !== found.devices.length) {
    return undefined;
  }
  const resume = found.overflow && found.resume && found.oddIds === 0
    ? { ...found.resume, rows: found.rowsKept }
    : undefined;
  const devices = found.devices;
  const index = new Map(devices.map((d, k) => [d, k]));
  const marks: number[][] = devices.map(() => []);
  for (let m = 0; m < found.marks; m++) {
    marks[markDevice[m]].push(markId[m]);
  }
  return {
    devices,
    index,
    marks,
    rows: found.overflow ? undefined : spare,
    spare,
    ptrs: new PtrKeys(),
    spans: found.spans,
    resume,
    freed: found.overflow ? freed : undefined,
    summary: {
      rows: found.dataRows,
      bytes: found.bytes,
      header,
    },
  };
}
