/**
 * Events as rows of msMemScope's event log (SPEC section 2), so that the
 * real tool's readers, and ours, take the daemon's log as it is.
 *
 * Choices where the real tool has no counterpart:
 * - an intercepted op launch (`aclopExecuteV2`, `aclopCompileAndExecute`)
 *   is a `KERNEL_LAUNCH,KERNEL_LAUNCH` row named after the op type: it is
 *   one launch onto the device, the level msMemScope's kernel rows describe,
 *   and `compare --level kernel` then lines ops up by name;
 * - a failed allocation is an `OOM_DETAIL,{pool}` row (size asked, the
 *   error code and the device's free bytes, the OOM snapshot's
 *   `device_free`), so leak analysis, which reads MALLOC and FREE only, never
 *   mistakes it for a block;
 * - process start and exit are `SYSTEM,PROC_START` (Name: the command line)
 *   and `SYSTEM,PROC_EXIT`;
 * - free text (mark messages, command lines) that starts with `= + - @` is
 *   kept behind a leading `'` instead of blanked, so no spreadsheet reads it
 *   as a formula and nothing the user wrote is lost.
 *
 * @module
 */
import type { TracedEvent } from "../events.ts";
import { MEMSCOPE_HEADER } from "./header.ts";
import {
  ascii,
  putBytes,
  putHex16,
  putInt,
  putText,
  type RowWriter,
  textRoom,
} from "./row_writer.ts";

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
  ATEN_START: ascii("OP_LAUNCH,ATEN_START,"),
  ATEN_END: ascii("OP_LAUNCH,ATEN_END,"),
  MARK: ascii("MSTX,Mark,"),
  RANGE_START: ascii("MSTX,Range_start,"),
  RANGE_END: ascii("MSTX,Range_end,Range end from id "),
  NA: ascii("N/A"),
  CPU: ascii("cpu"),
  NO_PTR_NO_ATTR: ascii(",N/A,,,"),
  NO_PTR_NO_ATTR_STACK: ascii(",N/A,,"),
  NO_PTR: ascii(",N/A,"),
  NO_STACKS: ascii(",,"),
  ALLOCATION_ID: ascii('"{allocation_id:'),
  ADDR: ascii(",addr:"),
  SIZE: ascii(",size:"),
  OOM_SIZE: ascii('"{size:'),
  ERROR: ascii(",error:"),
  DEVICE_FREE: ascii(",device_free:"),
  USED: ascii(",used:"),
  RANGE_ID: ascii('"{range_id:'),
  OWNER: ascii(",owner:"),
  ACCESS: ascii("ACCESS,"),
  DTYPE: ascii('"{dtype:'),
  SHAPE: ascii(",shape:"),
  CLOSE: ascii('}"'),
};

const COMMA = 44, NEWLINE = 10;
const encoder = new TextEncoder();
/** Room for a row's fixed fields: numbers of at most 21 bytes, words. */
const ROW_ROOM = 320;

// Timestamp, Process Id and Thread Id, each followed by a comma.
function putIds(b: Uint8Array, at: number, e: TracedEvent): number {
  at = putInt(b, at, e.ts);
  b[at++] = COMMA;
  at = putInt(b, at, e.pid);
  b[at++] = COMMA;
  at = putInt(b, at, e.tid);
  b[at++] = COMMA;
  return at;
}

function putDevice(
  b: Uint8Array,
  at: number,
  d: number,
  host: Uint8Array,
): number {
  return d < 0 ? putBytes(b, at, host) : putInt(b, at, d);
}

// Free text of the event (op name, message, command line), if any.
function textOf(e: TracedEvent): string {
  switch (e.kind) {
    case "op":
      return e.name;
    case "mark":
    case "range_start":
      return e.message;
    case "proc_start":
      return e.command;
    case "alloc":
      return e.op ?? "";
    case "access":
      return e.op;
    default:
      return "";
  }
}

/**
 * Appends the row of one event to `w`, `id` its ID; `used` is what the
 * event's device and pool have live after it (MALLOC/FREE Attr). Returns
 * false, writing nothing, for events the log does not keep (a failed free).
 *
 * The row is written through the `put` functions into room taken once:
 * the log writes a million rows a second.
 *
 * @example
 * ```ts
 * import { writeEventRow } from "./event_rows.ts";
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
  const text = textOf(e);
  const label = e.kind === "alloc" || e.kind === "access" || e.kind === "op"
    ? e
    : undefined;
  const b = w.room(
    ROW_ROOM + (text ? textRoom(text) : 0) +
      (label?.kind === "alloc" && label.owner ? textRoom(label.owner) : 0) +
      (label?.kind === "access" ? textRoom(label.dtype + label.shape) : 0) +
      (label?.pythonStack ? textRoom(label.pythonStack) : 0),
  );
  let at = putInt(b, w.length, id);
  b[at++] = COMMA;
  switch (e.kind) {
    case "alloc":
    case "free": {
      const failed = e.kind === "alloc" && e.result !== 0;
      at = putBytes(
        b,
        at,
        failed ? W.OOM : e.kind === "alloc" ? W.MALLOC : W.FREE,
      );
      if (label?.kind === "alloc" && label.op) {
        // A framework's allocation is named after the op that made it.
        at = putBytes(b, at, ascii(`${e.pool},`));
        at = putText(b, at, label.op);
        b[at++] = COMMA;
      } else {
        at = putBytes(b, at, W[e.pool]);
      }
      at = putIds(b, at, e);
      at = putDevice(b, at, e.device, W.CPU);
      b[at++] = COMMA;
      if (failed) {
        at = putBytes(b, at, W.NA);
        b[at++] = COMMA;
        at = putBytes(b, at, W.OOM_SIZE);
        at = putInt(b, at, e.size);
        at = putBytes(b, at, W.ERROR);
        at = putInt(b, at, e.result);
        at = putBytes(b, at, W.DEVICE_FREE);
        at = putInt(b, at, e.addr);
      } else {
        const ptr = at;
        at = putHex16(b, at, e.addr);
        b[at++] = COMMA;
        at = putBytes(b, at, W.ALLOCATION_ID);
        at = putInt(b, at, e.allocationId);
        at = putBytes(b, at, W.ADDR);
        // The same 18 bytes as Ptr.
        for (let i = 0; i < 18; i++) b[at++] = b[ptr + i];
        at = putBytes(b, at, W.SIZE);
        at = putInt(b, at, e.size);
        if (label?.kind === "alloc" && label.owner) {
          // Owners are checked at the edge: no quote, comma or brace.
          at = putBytes(b, at, W.OWNER);
          at += encoder.encodeInto(label.owner, b.subarray(at)).written;
        }
      }
      at = putBytes(b, at, W.USED);
      at = putInt(b, at, used);
      at = putBytes(b, at, W.CLOSE);
      if (label?.pythonStack) {
        b[at++] = COMMA;
        at = putText(b, at, label.pythonStack);
        b[at++] = COMMA;
      } else {
        at = putBytes(b, at, W.NO_STACKS);
      }
      break;
    }
    case "access":
      // Event Type READ/WRITE/UNKNOWN, Name the op, Ptr the tensor.
      at = putBytes(b, at, W.ACCESS);
      at = putBytes(b, at, ascii(`${e.access},`));
      at = putText(b, at, text);
      b[at++] = COMMA;
      at = putIds(b, at, e);
      at = putDevice(b, at, e.device, W.CPU);
      b[at++] = COMMA;
      at = putHex16(b, at, e.addr);
      b[at++] = COMMA;
      at = putBytes(b, at, W.DTYPE);
      at += encoder.encodeInto(e.dtype, b.subarray(at)).written;
      at = putBytes(b, at, W.SHAPE);
      at += encoder.encodeInto(e.shape, b.subarray(at)).written;
      at = putBytes(b, at, W.SIZE);
      at = putInt(b, at, e.size);
      at = putBytes(b, at, W.CLOSE);
      if (e.pythonStack) {
        b[at++] = COMMA;
        at = putText(b, at, e.pythonStack);
        b[at++] = COMMA;
      } else {
        at = putBytes(b, at, W.NO_STACKS);
      }
      break;
    case "op":
    case "mark":
      at = putBytes(
        b,
        at,
        e.kind === "mark"
          ? W.MARK
          : e.framework === undefined
          ? W.KERNEL
          : e.framework === "start"
          ? W.ATEN_START
          : W.ATEN_END,
      );
      at = putText(b, at, text);
      b[at++] = COMMA;
      at = putIds(b, at, e);
      at = putDevice(b, at, e.device, W.NA);
      if (e.kind === "op" && e.pythonStack) {
        at = putBytes(b, at, W.NO_PTR_NO_ATTR_STACK);
        at = putText(b, at, e.pythonStack);
        b[at++] = COMMA;
      } else {
        at = putBytes(b, at, W.NO_PTR_NO_ATTR);
      }
      break;
    case "range_start":
    case "range_end":
      if (e.kind === "range_start") {
        at = putBytes(b, at, W.RANGE_START);
        at = putText(b, at, text);
      } else {
        at = putBytes(b, at, W.RANGE_END);
        at = putInt(b, at, e.id);
      }
      b[at++] = COMMA;
      at = putIds(b, at, e);
      at = putDevice(b, at, e.device, W.NA);
      at = putBytes(b, at, W.NO_PTR);
      at = putBytes(b, at, W.RANGE_ID);
      at = putInt(b, at, e.id);
      at = putBytes(b, at, W.CLOSE);
      at = putBytes(b, at, W.NO_STACKS);
      break;
    case "proc_start":
    case "proc_exit":
      at = putBytes(b, at, W.SYSTEM);
      if (e.kind === "proc_start") {
        at = putBytes(b, at, W.PROC_START);
        at = putText(b, at, text);
        b[at++] = COMMA;
      } else {
        at = putBytes(b, at, W.PROC_EXIT);
      }
      at = putIds(b, at, e);
      at = putBytes(b, at, W.NA);
      at = putBytes(b, at, W.NO_PTR_NO_ATTR);
      break;
  }
  b[at++] = NEWLINE;
  w.length = at;
  return true;
}
