/**
 * check_leaks' first pass in native code (`ffi/daemon/leak_scan.c`): the
 * same devices, marks and rows as `_first_pass.ts`, without handing each
 * row to JavaScript. The header is read and checked by the TypeScript
 * reader (its errors are the ones a person sees); the rows from there on
 * natively. Undefined where the native pass cannot give the same answer
 * for certain (it says so rather than guess): the caller then runs the
 * TypeScript pass.
 *
 * @module
 */
import { eventLogFd } from "../memscope_csv/open.ts";
import { MemscopeCsvError } from "../memscope_csv/header.ts";
import {
  type EventLogSource,
  readMemscopeStart,
} from "../memscope_csv/read.ts";
import { leakScan } from "../../ffi/bindings.ts";
import type { FirstPass } from "./_first_pass.ts";
import { LEAK_COLUMNS, LeakRows, PtrKeys } from "./_leak_rows.ts";
import type { CheckedOptions } from "./options.ts";

/** MEMSCOPE_HEADER positions of LEAK_COLUMNS, in the order leak_scan.c reads them. */
const HEADER_AT = [0, 1, 2, 3, 7, 8, 9];

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
  if (typeof source === "string") return undefined;
  const fd = eventLogFd(source.file);
  if (fd === undefined) return undefined;
  const start = await readMemscopeStart(source, { columns: LEAK_COLUMNS });
  if (start === undefined) return undefined;
  const size = await source.file.seek(0, Deno.SeekMode.End);
  // As the TypeScript pass sizes them: untouched room costs address space.
  const spare = new LeakRows(options.rowBudget, Math.ceil(size / 64));
  // A mark row has at least 8 fields, 19 bytes: room for every row that
  // could be one (address space only, until written).
  const markRoom = Math.ceil(size / 16) + 1;
  const markDevice = new Uint32Array(markRoom);
  const markId = new Float64Array(markRoom);
  const scan = leakScan({
    fd,
    columns: HEADER_AT.map((k) => start.columns.at[k]),
    offset: start.offset,
    line: start.line,
    rows: spare,
    budget: options.rowBudget,
    markDevice,
    markId,
    eventType: options.eventType,
    mstxInfo: options.mstxInfo,
  });
  let found: Awaited<typeof scan>;
  try {
    found = await scan;
  } catch (e) {
    throw new MemscopeCsvError(
      `Cannot read ${source.label}: ${(e as Error).message}`,
    );
  }
  if (found.fallback || new Set(found.devices).size !== found.devices.length) {
    return undefined;
  }
  spare.length = found.rowsKept;
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
    summary: {
      rows: found.dataRows,
      bytes: found.bytes,
      header: start.columns.names,
    },
  };
}
