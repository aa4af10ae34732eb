/**
 * Writes CSV rows straight into bytes: numbers as digits, pointers through
 * a hex table, fixed words pre-encoded. The event log must keep up with the
 * ring (a million rows a second), and building each row as a string, then
 * encoding it, costs several times that.
 *
 * @module
 */

const encoder = new TextEncoder();
const HEX = encoder.encode("0123456789abcdef");
const COMMA = 44, NEWLINE = 10, QUOTE = 34, APOSTROPHE = 39;
const POW10 = Array.from({ length: 16 }, (_, i) => 10 ** i);
// "00" to "99" as byte pairs.
const PAIRS = encoder.encode(
  Array.from({ length: 100 }, (_, i) => String(i).padStart(2, "0")).join(""),
);

/** Bytes of an ASCII word, for {@linkcode RowWriter.bytes}. */
export function ascii(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * A growing byte buffer of CSV rows.
 *
 * @example
 * ```ts
 * import { RowWriter } from "./row_writer.ts";
 * const w = new RowWriter();
 * w.int(7); w.comma(); w.hex16(0x1000); w.end();
 * new TextDecoder().decode(w.view()); // "7,0x0000000000001000\n"
 * ```
 */
export class RowWriter {
  #buf: Uint8Array;
  #len = 0;

  /** A writer whose buffer starts at `capacity` bytes. */
  constructor(capacity = 1 << 20) {
    this.#buf = new Uint8Array(capacity);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#len;
  }

  /** The bytes written so far (a view, valid until the next write). */
  view(): Uint8Array {
    return this.#buf.subarray(0, this.#len);
  }

  /** Forgets what was written. */
  clear(): void {
    this.#len = 0;
  }

  #room(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    const bigger = new Uint8Array(
      Math.max(this.#buf.length * 2, this.#len + n),
    );
    bigger.set(this.#buf.subarray(0, this.#len));
    this.#buf = bigger;
  }

  /** A comma. */
  comma(): void {
    this.#room(1);
    this.#buf[this.#len++] = COMMA;
  }

  /** Ends the row. */
  end(): void {
    this.#room(1);
    this.#buf[this.#len++] = NEWLINE;
  }

  /** Pre-encoded bytes. */
  bytes(src: Uint8Array): void {
    this.#room(src.length);
    const b = this.#buf;
    let at = this.#len;
    // A loop: TypedArray.set costs more than it copies for a few bytes.
    for (let i = 0; i < src.length; i++) b[at++] = src[i];
    this.#len = at;
  }

  /**
   * An integer. Nanosecond timestamps pass 2^53: they are written as
   * seconds and nine digits, both exact, never through String().
   */
  int(n: number): void {
    if (n < 0) {
      this.#room(1);
      this.#buf[this.#len++] = 45; // -
      n = -n;
    }
    if (n < 1e15) return this.#digits(n, 0);
    let sec = Math.floor(n / 1e9);
    let ns = n - sec * 1e9; // exact: sec * 1e9 has at most 52 significant bits
    if (ns < 0) {
      sec--;
      ns += 1e9;
    }
    this.#digits(sec, 0);
    this.#digits(ns, 9);
  }

  // n's digits (n < 1e15), zero-padded to `width`; two digits a step.
  #digits(n: number, width: number): void {
    let digits = 1;
    while (digits < 15 && n >= POW10[digits]) digits++;
    if (digits < width) digits = width;
    this.#room(digits);
    const b = this.#buf;
    let i = this.#len + digits;
    while (n >= 2147483648) {
      const q = Math.floor(n / 100);
      const r = (n - q * 100) * 2;
      b[--i] = PAIRS[r + 1];
      b[--i] = PAIRS[r];
      n = q;
    }
    let m = n | 0;
    while (m >= 100) {
      const q = (m / 100) | 0;
      const r = (m - q * 100) * 2;
      b[--i] = PAIRS[r + 1];
      b[--i] = PAIRS[r];
      m = q;
    }
    if (m >= 10) {
      b[--i] = PAIRS[m * 2 + 1];
      b[--i] = PAIRS[m * 2];
    } else {
      b[--i] = 48 + m;
    }
    while (i > this.#len) b[--i] = 48;
    this.#len += digits;
  }

  /** `0x` and 16 hex digits of an address below 2^53. */
  hex16(addr: number): void {
    this.#room(18);
    const b = this.#buf;
    let at = this.#len;
    b[at++] = 48;
    b[at++] = 120; // x
    let hi = Math.floor(addr / 4294967296), lo = addr >>> 0;
    for (let i = at + 15; i >= at + 8; i--, lo >>>= 4) b[i] = HEX[lo & 15];
    for (let i = at + 7; i >= at; i--, hi >>>= 4) b[i] = HEX[hi & 15];
    this.#len = at + 16;
  }

  /**
   * Free text as one CSV field: quoted when it holds a comma, quote, line
   * break or outer blanks, and behind a `'` when it starts with `= + - @`
   * so no spreadsheet evaluates it.
   */
  text(s: string): void {
    this.#room(s.length * 3 + 3);
    const b = this.#buf;
    const c0 = s.charCodeAt(0);
    let at = this.#len;
    // Fast path: short printable ASCII with nothing to quote or guard.
    let plain = !(c0 === 61 || c0 === 43 || c0 === 45 || c0 === 64 ||
      c0 === 32 || s.charCodeAt(s.length - 1) === 32);
    for (let i = 0; plain && i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 32 || c > 126 || c === QUOTE || c === COMMA) plain = false;
      else b[at++] = c;
    }
    if (plain) {
      this.#len = at;
      return;
    }
    const guard = c0 === 61 || c0 === 43 || c0 === 45 || c0 === 64;
    const quote = /[",\r\n]/.test(s) || s !== s.trim();
    at = this.#len;
    if (quote) b[at++] = QUOTE;
    if (guard) b[at++] = APOSTROPHE;
    const body = quote ? s.replaceAll('"', '""') : s;
    this.#len = at;
    this.#room(body.length * 3 + 1);
    this.#len += encoder.encodeInto(body, this.#buf.subarray(this.#len))
      .written;
    if (quote) this.#buf[this.#len++] = QUOTE;
  }
}
