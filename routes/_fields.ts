/**
 * Validation of the fields `POST /watch` and `POST /remove` take. Each
 * function returns the typed value or throws a 400 saying what was wrong and
 * what to send instead. `null` counts as absent for optional fields, so
 * clients that send `None` get the default.
 *
 * @module
 */

import {
  hasControlChar,
  MAX_OP_NAME_BYTES,
  MAX_WATCH_NAME_BYTES,
  MAX_WATCH_NAME_CHARS,
  utf8ByteLength,
} from "../watch/limits.ts";
import { kindOf } from "./_body.ts";
import { badRequest } from "./_errors.ts";

const MAX_PID = 2147483647;
const MAX_U64 = (1n << 64n) - 1n;

/**
 * A pid: a positive integer (pid_t range).
 *
 * @example
 * ```ts
 * import { pidField } from "./_fields.ts";
 * pidField(4242); // 4242
 * ```
 */
export function pidField(value: unknown): number {
  if (value === undefined) {
    badRequest(
      "Missing field pid: give the traced process id (see GET /processes)",
    );
  }
  if (
    !Number.isInteger(value) || (value as number) < 1 ||
    (value as number) > MAX_PID
  ) {
    badRequest(`Invalid pid: ${kindOf(value)} is not a positive integer`);
  }
  return value as number;
}

/**
 * A watch name: 1 to 64 characters, no control characters, at most 96 bytes.
 *
 * @example
 * ```ts
 * import { nameField } from "./_fields.ts";
 * nameField("mynorm"); // "mynorm"
 * ```
 */
export function nameField(value: unknown): string {
  const hint =
    `give the watch a name of 1 to ${MAX_WATCH_NAME_CHARS} characters`;
  if (value === undefined || value === null) {
    badRequest(`Missing field name: ${hint}`);
  }
  if (typeof value !== "string") {
    badRequest(`Invalid name: got ${kindOf(value)}; ${hint}`);
  }
  if (value === "") badRequest(`Invalid name: it is empty; ${hint}`);
  const chars = [...value].length;
  if (chars > MAX_WATCH_NAME_CHARS) {
    badRequest(`Invalid name: it is ${chars} characters long; ${hint}`);
  }
  if (utf8ByteLength(value) > MAX_WATCH_NAME_BYTES) {
    badRequest(
      `Invalid name: it takes ${
        utf8ByteLength(value)
      } bytes in UTF-8, at most ${MAX_WATCH_NAME_BYTES} fit in dump file names`,
    );
  }
  if (hasControlChar(value)) {
    badRequest("Invalid name: it contains a control character");
  }
  if (!value.isWellFormed()) {
    badRequest(
      "Invalid name: it holds a lone UTF-16 surrogate, which no file name can carry",
    );
  }
  return value;
}

/**
 * An address or a length: a JSON number (exact up to 2^53), or a string in
 * hex (`0x...`) or decimal, up to 2^64 - 1.
 *
 * @example
 * ```ts
 * import { u64Field } from "./_fields.ts";
 * u64Field("0x12c0000", "addr"); // 19660800n
 * ```
 */
export function u64Field(value: unknown, field: "addr" | "length"): bigint {
  const hint = field === "addr"
    ? 'send a hex string such as "0x12c0000" or a decimal number'
    : "send a positive number of bytes";
  if (value === undefined || value === null) {
    badRequest(`Missing field ${field}: ${hint}`);
  }
  let parsed: bigint | undefined;
  if (typeof value === "number" && Number.isInteger(value) && value >= 0) {
    if (!Number.isSafeInteger(value)) {
      badRequest(
        `Invalid ${field}: ${value} is beyond 2^53 and loses precision as a JSON number; send it as a hex string`,
      );
    }
    parsed = BigInt(value);
  } else if (
    typeof value === "string" && /^(0[xX][0-9a-fA-F]+|[0-9]+)$/.test(value)
  ) {
    parsed = BigInt(value);
  }
  if (parsed === undefined || parsed > MAX_U64) {
    badRequest(
      `Invalid ${field}: ${
        kindOf(value)
      } is not a 64-bit unsigned integer; ${hint}`,
    );
  }
  if (field === "length" && parsed === 0n) {
    badRequest(`Invalid length: it is 0; ${hint}`);
  }
  return parsed;
}

/**
 * dump_nums: -1 (unlimited, the default) or a count of at least 1.
 *
 * @example
 * ```ts
 * import { dumpNumsField } from "./_fields.ts";
 * dumpNumsField(undefined); // -1
 * ```
 */
export function dumpNumsField(value: unknown): number {
  if (value === undefined || value === null) return -1;
  if (
    !Number.isSafeInteger(value) || (value as number) === 0 ||
    (value as number) < -1
  ) {
    badRequest(
      `Invalid dump_nums: ${
        kindOf(value)
      } is not allowed; use -1 for unlimited or a count of at least 1`,
    );
  }
  return value as number;
}

/**
 * full_content: a boolean, false by default.
 *
 * @example
 * ```ts
 * import { fullContentField } from "./_fields.ts";
 * fullContentField(true); // true
 * ```
 */
export function fullContentField(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== "boolean") {
    badRequest(
      `Invalid full_content: got ${kindOf(value)}; send true or false`,
    );
  }
  return value;
}

/**
 * start or end: an op name of 1 to 95 bytes, or absent.
 *
 * @example
 * ```ts
 * import { opField } from "./_fields.ts";
 * opField("Mul", "end"); // "Mul"
 * ```
 */
export function opField(
  value: unknown,
  field: "start" | "end",
): string | undefined {
  if (value === undefined || value === null) return undefined;
  const absent = field === "start"
    ? "opens the window now"
    : "closes it at remove";
  if (typeof value !== "string" || value === "") {
    badRequest(
      `Invalid ${field}: got ${
        kindOf(value)
      }; give an op name, or leave ${field} out, which ${absent}`,
    );
  }
  if (utf8ByteLength(value) > MAX_OP_NAME_BYTES) {
    badRequest(
      `Invalid ${field}: it is longer than ${MAX_OP_NAME_BYTES} bytes`,
    );
  }
  if (hasControlChar(value)) {
    badRequest(`Invalid ${field}: it contains a control character`);
  }
  if (!value.isWellFormed()) {
    badRequest(`Invalid ${field}: it holds a lone UTF-16 surrogate`);
  }
  return value;
}

/**
 * A pid given in a query string (`?pid=4242`), or undefined when absent.
 *
 * @example
 * ```ts
 * import { queryPid } from "./_fields.ts";
 * queryPid("4242"); // 4242
 * ```
 */
export function queryPid(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[1-9][0-9]{0,9}$/.test(text) || Number(text) > MAX_PID) {
    badRequest(
      `Invalid pid: ${JSON.stringify(text)} is not a positive integer`,
    );
  }
  return Number(text);
}
