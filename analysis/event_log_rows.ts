/**
 * Events as rows of msMemScope's event log (SPEC section 2), so that the
 * real tool's readers, and ours, take the daemon's log as it is.
 *
 * Choices where the real tool has no counterpart:
 * - an intercepted op launch (`aclopExecuteV2`, `aclopCompileAndExecute`)
 *   is a `KERNEL_LAUNCH,KERNEL_LAUNCH` row named after the op type: it is
 *   one launch onto the device, the level msMemScope's kernel rows describe,
 *   and `compare --level kernel` then lines ops up by name;
 * - a failed allocation is an `OOM_DETAIL,{pool}` row (size asked and the
 *   error code), so leak analysis, which reads MALLOC and FREE only, never
 *   mistakes it for a block;
 * - process start and exit are `SYSTEM,PROC_START` (Name: the command line)
 *   and `SYSTEM,PROC_EXIT`;
 * - free text (mark messages, command lines) that starts with `= + - @` is
 *   kept behind a leading `'` instead of blanked, so no spreadsheet reads it
 *   as a formula and nothing the user wrote is lost.
 *
 * @module
 */
import type { TracedEvent } from "./events.ts";
import { MEMSCOPE_HEADER } from "./memscope_csv.ts";
import { ascii, type RowWriter } from "./row_writer.ts";

/** The log's first line. */
export const EVENT_LOG_HEADER = MEMSCOPE_HEADER.join(",");

const W = {
  SYSTEM: ascii("SYSTEM,"),
  PROC_START: ascii("PROC_START,"),
  PROC_EXIT: ascii("PROC_EXIT,N/A,"),
  MALLOC: ascii("MALLOC,"),
  FREE: ascii("FREE,"),
  OOM: ascii("OOM_DETAIL,"),
  HAL: ascii("HAL,N/A,"),
  HOST: ascii("HOST,N/A,"),
  PTA: ascii("PTA,N/A,"),
  KERNEL: ascii("KERNEL_LAUNCH,KERNEL_LAUNCH,"),
  MARK: ascii("MSTX,Mark,"),
  RANGE_START: ascii("MSTX,Range_start,"),
  RANGE_END: ascii("MSTX,Range_end,Range end from id "),
  NA: ascii("N/A"),
  CPU: ascii("cpu"),
  NO_PTR_NO_ATTR: ascii(",N/A,,,"),
  NO_PTR: ascii(",N/A,"),
  NO_STACKS: ascii(",,"),
  ALLOCATION_ID: ascii('"{allocation_id:'),
  ADDR: ascii(",addr:"),
  SIZE: ascii(",size:"),
  OOM_SIZE: ascii('"{size:'),
  ERROR: ascii(",error:"),
  USED: ascii(",used:"),
  RANGE_ID: ascii('"{range_id:'),
  CLOSE: ascii('}"'),
};

// ID through Thread Id, with Event and Event Type (and Name) already given.
function ids(w: RowWriter, e: TracedEvent): void {
  w.int(e.ts);
  w.comma();
  w.int(e.pid);
  w.comma();
  w.int(e.tid);
  w.comma();
}

function device(w: RowWriter, d: number, host: Uint8Array): void {
  if (d < 0) w.bytes(host);
  else w.int(d);
}

/**
 * Appends the row of one event to `w`, `id` its ID; `used` is what the
 * event's device and pool have live after it (MALLOC/FREE Attr). Returns
 * false, writing nothing, for events the log does not keep (a failed free).
 *
 * @example
 * ```ts
 * import { writeEventRow } from "./event_log_rows.ts";
 * import { RowWriter } from "./row_writer.ts";
 * const w = new RowWriter();
 * writeEventRow(w, 7, {
 *   kind: "mark", message: "step", pid: 1, tid: 1, ts: 5, device: 0,
 * }, 0);
 * new TextDecoder().decode(w.view()); // "7,MSTX,Mark,step,5,1,1,0,N/A,,,\n"
 * ```
 */
export function writeEventRow(
  w: RowWriter,
  id: number,
  e: TracedEvent,
  used: number,
): boolean {
  if (e.kind === "free" && e.result !== 0) return false;
  w.int(id);
  w.comma();
  switch (e.kind) {
    case "alloc":
    case "free": {
      const failed = e.kind === "alloc" && e.result !== 0;
      w.bytes(failed ? W.OOM : e.kind === "alloc" ? W.MALLOC : W.FREE);
      w.bytes(W[e.pool]);
      ids(w, e);
      device(w, e.device, W.CPU);
      w.comma();
      if (failed) {
        w.bytes(W.NA);
        w.comma();
        w.bytes(W.OOM_SIZE);
        w.int(e.size);
        w.bytes(W.ERROR);
        w.int(e.result);
      } else {
        w.hex16(e.addr);
        w.comma();
        w.bytes(W.ALLOCATION_ID);
        w.int(e.allocationId);
        w.bytes(W.ADDR);
        w.hex16(e.addr);
        w.bytes(W.SIZE);
        w.int(e.size);
      }
      w.bytes(W.USED);
      w.int(used);
      w.bytes(W.CLOSE);
      w.bytes(W.NO_STACKS);
      break;
    }
    case "op":
    case "mark":
      if (e.kind === "op") {
        w.bytes(W.KERNEL);
        w.text(e.name);
      } else {
        w.bytes(W.MARK);
        w.text(e.message);
      }
      w.comma();
      ids(w, e);
      device(w, e.device, W.NA);
      w.bytes(W.NO_PTR_NO_ATTR);
      break;
    case "range_start":
    case "range_end":
      if (e.kind === "range_start") {
        w.bytes(W.RANGE_START);
        w.text(e.message);
      } else {
        w.bytes(W.RANGE_END);
        w.int(e.id);
      }
      w.comma();
      ids(w, e);
      device(w, e.device, W.NA);
      w.bytes(W.NO_PTR);
      w.bytes(W.RANGE_ID);
      w.int(e.id);
      w.bytes(W.CLOSE);
      w.bytes(W.NO_STACKS);
      break;
    case "proc_start":
    case "proc_exit":
      w.bytes(W.SYSTEM);
      if (e.kind === "proc_start") {
        w.bytes(W.PROC_START);
        w.text(e.command);
        w.comma();
      } else {
        w.bytes(W.PROC_EXIT);
      }
      ids(w, e);
      w.bytes(W.NA);
      w.bytes(W.NO_PTR_NO_ATTR);
      break;
  }
  w.end();
  return true;
}
