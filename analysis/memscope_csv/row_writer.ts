/**
 * Writes CSV rows straight into bytes: numbers as digits, pointers through
 * a hex table, fixed words pre-encoded. The event log must keep up with the
 * ring (a million rows a second), and building each row as a string, then
 * encoding it, costs several times that.
 *
 * @module
 */

import { eventLogText } from "./field.ts";

const encoder = new TextEncoder();
const HEX = encoder.encode("0123456789abcdef");
const COMMA = 44, QUOTE = 34;
// "0000" to "9999", four bytes each (40 KB).
const QUADS = encoder.encode(
  Array.from({ length: 10000 }, (_, i) => String(i).padStart(4, "0")).join(""),
);

/** Bytes of an ASCII word, for {@linkcode RowWriter.bytes}. */
export function ascii(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * Writes `src` into `b` at `at`; returns the position after it. The caller
 * has made room (see {@linkcode RowWriter.room}).
 *
 * @example
 * ```ts
 * import { ascii, putBytes } from "./row_writer.ts";
 * putBytes(new Uint8Array(4), 1, ascii("ab")); // 3
 * ```
 */
export function putBytes(b: Uint8Array, at: number, src: Uint8Array): number {
  // A loop: TypedArray.set costs more than it copies for a few bytes.
  for (let i = 0; i < src.length; i++) b[at++] = src[i];
  return at;
}

// Four digits of q (< 1e4), zero-padded.
function putQuad(b: Uint8Array, at: number, q: number): number {
  const k = q * 4;
  b[at] = QUADS[k];
  b[at + 1] = QUADS[k + 1];
  b[at + 2] = QUADS[k + 2];
  b[at + 3] = QUADS[k + 3];
  return at + 4;
}

// One to four digits of q (< 1e4), not padded.
function putQuadShort(b: Uint8Array, at: number, q: number): number {
  if (q >= 1000) return putQuad(b, at, q);
  const k = q * 4;
  if (q >= 100) {
    b[at] = QUADS[k + 1];
    b[at + 1] = QUADS[k + 2];
    b[at + 2] = QUADS[k + 3];
    return at + 3;
  }
  if (q >= 10) {
    b[at] = QUADS[k + 2];
    b[at + 1] = QUADS[k + 3];
    return at + 2;
  }
  b[at] = QUADS[k + 3];
  return at + 1;
}

// m's digits (0 <= m < 1e8), exactly eight when `padded`. Four digits a
// step from a table, and a multiply instead of a division: m * 0.0001 is
// never below m / 1e4 (0.0001 rounds up as a double), so its floor is exact.
function putSmall(b: Uint8Array, at: number, m: number, padded: boolean) {
  m |= 0; // an int32 from here: indexes stay integers
  if (m < 10000 && !padded) return putQuadShort(b, at, m);
  const hi = Math.floor(m * 0.0001) | 0;
  at = padded ? putQuad(b, at, hi) : putQuadShort(b, at, hi);
  return putQuad(b, at, (m - hi * 10000) | 0);
}

// n's digits (0 <= n < 1e16), at least nine when `nine`: split in two
// halves below 1e8.
function putDigits(b: Uint8Array, at: number, n: number, nine: boolean) {
  if (n < 1e8 && !nine) return putSmall(b, at, n, false);
  let hi = Math.floor(n / 1e8), lo = n - hi * 1e8;
  if (lo < 0) { // the quotient rounded up
    hi--;
    lo += 1e8;
  }
  return putSmall(b, putSmall(b, at, hi, false), lo, true);
}

let lastSec = -1, lastSecLength = 0;
const lastSecDigits = new Uint8Array(16);

/**
 * Writes an integer (at most 21 bytes) and returns the position after it.
 * Nanosecond timestamps pass 2^53: they are written as seconds and nine
 * digits, both exact, never through String().
 *
 * @example
 * ```ts
 * import { putInt } from "./row_writer.ts";
 * putInt(new Uint8Array(21), 0, -42); // 3
 * ```
 */
export function putInt(b: Uint8Array, at: number, n: number): number {
  if (n < 0) {
    b[at++] = 45; // -
    n = -n;
  }
  if (n < 1e15) return putDigits(b, at, n, false);
  let sec = Math.floor(n / 1e9);
  let ns = n - sec * 1e9; // exact: sec * 1e9 has at most 52 significant bits
  if (ns < 0) {
    sec--;
    ns += 1e9;
  }
  // Timestamps of one second share their first ten digits: copy them.
  if (sec !== lastSec) {
    lastSec = sec;
    lastSecLength = putDigits(lastSecDigits, 0, sec, false);
  }
  for (let i = 0; i < lastSecLength; i++) b[at++] = lastSecDigits[i];
  return putDigits(b, at, ns, true);
}

/**
 * Writes `0x` and 16 hex digits of an address below 2^53; returns the
 * position after them.
 *
 * @example
 * ```ts
 * import { putHex16 } from "./row_writer.ts";
 * putHex16(new Uint8Array(18), 0, 0x1000); // 18
 * ```
 */
export function putHex16(b: Uint8Array, at: number, addr: number): number {
  b[at++] = 48;
  b[at++] = 120; // x
  let hi = Math.floor(addr / 4294967296), lo = addr >>> 0;
  for (let i = at + 15; i >= at + 8; i--, lo >>>= 4) b[i] = HEX[lo & 15];
  for (let i = at + 7; i >= at; i--, hi >>>= 4) b[i] = HEX[hi & 15];
  return at + 16;
}

/**
 * Bytes {@linkcode putText} may need for `s`: three per UTF-16 unit covers
 * UTF-8 and doubled quotes, plus two quotes and a guard.
 *
 * @example
 * ```ts
 * import { textRoom } from "./row_writer.ts";
 * textRoom("ab"); // 9
 * ```
 */
export function textRoom(s: string): number {
  return s.length * 3 + 3;
}

/**
 * Writes free text as one event-log field, by {@linkcode eventLogText}'s
 * rules (quoted when needed, `= + - @` kept behind a `'`). `b` must hold
 * {@linkcode textRoom} bytes at `at`.
 *
 * @example
 * ```ts
 * import { putText } from "./row_writer.ts";
 * putText(new Uint8Array(16), 0, "a,b"); // 5
 * ```
 */
export function putText(b: Uint8Array, at: number, s: string): number {
  const c0 = s.charCodeAt(0);
  const start = at;
  // Fast path: printable ASCII with nothing to quote or guard.
  let plain = !(c0 === 61 || c0 === 43 || c0 === 45 || c0 === 64 ||
    c0 === 32 || s.charCodeAt(s.length - 1) === 32);
  for (let i = 0; plain && i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 32 || c > 126 || c === QUOTE || c === COMMA) plain = false;
    else b[at++] = c;
  }
  if (plain) return at;
  return start + encoder.encodeInto(eventLogText(s), b.subarray(start)).written;
}

/**
 * A growing byte buffer of CSV rows. Writers take {@linkcode room} once per
 * row, write with the `put` functions keeping the position in a local, and
 * set {@linkcode length} after.
 *
 * @example
 * ```ts
 * import { putHex16, putInt, RowWriter } from "./row_writer.ts";
 * const w = new RowWriter();
 * const b = w.room(64);
 * let at = putInt(b, w.length, 7);
 * b[at++] = 44; // ,
 * w.length = putHex16(b, at, 0x1000);
 * new TextDecoder().decode(w.view()); // "7,0x0000000000001000"
 * ```
 */
export class RowWriter {
  #buf: Uint8Array;
  /** Bytes written so far; hot writers set it after writing. */
  length = 0;

  /** A writer whose buffer starts at `capacity` bytes. */
  constructor(capacity = 1 << 20) {
    this.#buf = new Uint8Array(Math.max(capacity, 64));
  }

  /** The bytes written so far (a view, valid until the next write). */
  view(): Uint8Array {
    return this.#buf.subarray(0, this.length);
  }

  /** Forgets what was written. */
  clear(): void {
    this.length = 0;
  }

  /** Makes room for `n` more bytes; returns the buffer to write into. */
  room(n: number): Uint8Array {
    if (this.length + n <= this.#buf.length) return this.#buf;
    const bigger = new Uint8Array(
      Math.max(this.#buf.length * 2, this.length + n),
    );
    bigger.set(this.#buf.subarray(0, this.length));
    return this.#buf = bigger;
  }

  /** Pre-encoded bytes. */
  bytes(src: Uint8Array): void {
    this.length = putBytes(this.room(src.length), this.length, src);
  }
}
