/**
 * msMemScope's event log (`memscope_dump_*.csv`, SPEC section 2): the
 * streaming reader and its row cursor, the byte writer of the daemon's own
 * log, and the CSV field rules every file stompwatch writes follows. The
 * scanner underneath (`_scan.ts`, WebAssembly) frames rows on raw bytes.
 *
 * @example
 * ```ts
 * import { readMemscopeCsv } from "./mod.ts";
 * const marks: number[] = [];
 * await readMemscopeCsv("memscope_dump.csv", (row) => {
 *   if (row.event === "MSTX" && row.nameEquals("step")) marks.push(row.id);
 * });
 * ```
 *
 * @module
 */

export {
  DATA_COLUMNS,
  MEMSCOPE_HEADER,
  type MemscopeColumn,
  MemscopeCsvError,
} from "./header.ts";
export {
  MEM_DEVICE,
  MEM_ID,
  MEM_PID,
  MEM_PTR,
  MEM_SIZE,
  MEM_SLOTS,
  MEM_STACKS,
  MEM_TIME_US,
  type MemscopeRecord,
  MemscopeRow,
} from "./row.ts";
export { eventLogFd, openEventLog } from "./open.ts";
export {
  type EventLogSource,
  readMemscopeBytes,
  readMemscopeCsv,
  readMemscopeRowsAt,
  readMemscopeStart,
  type ReadOptions,
  type ReadSummary,
} from "./read.ts";
export { csvField, eventLogText, formatPtr } from "./field.ts";
export { EVENT_LOG_HEADER, writeEventRow } from "./event_rows.ts";
export {
  ascii,
  putBytes,
  putHex16,
  putInt,
  putText,
  RowWriter,
  textRoom,
} from "./row_writer.ts";
