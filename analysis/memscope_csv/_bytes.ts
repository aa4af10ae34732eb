/**
 * Byte-level helpers of the msMemScope CSV reader: number parsing, short
 * string decoding and interning, `{k:v,...}` lookups, all straight from the
 * read buffer so that rows nobody asks about are never turned into strings.
 *
 * @module
 */

const decoder = new TextDecoder();

/** Decodes UTF-8 bytes [s, e); short ASCII runs skip the TextDecoder call. */
export function decodeRange(b: Uint8Array, s: number, e: number): string {
  if (e - s > 32) return decoder.decode(b.subarray(s, e));
  let out = "";
  for (let i = s; i < e; i++) {
    const c = b[i];
    if (c >= 0x80) return decoder.decode(b.subarray(s, e));
    out += String.fromCharCode(c);
  }
  return out;
}

/** Decodes a quoted field's bytes, turning each `""` back into `"`. */
export function decodeQuoted(b: Uint8Array, s: number, e: number): string {
  return decodeRange(b, s, e).replaceAll('""', '"');
}

/** Whitespace as Python's `str.strip()` sees it in ASCII. */
function blank(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/**
 * A decimal integer as Python's `int()` reads one (msMemScope's analyser
 * reads IDs so): surrounding whitespace, an optional sign, digits with
 * single `_` between them; NaN when the bytes are anything else.
 */
export function parseDecimal(b: Uint8Array, s: number, e: number): number {
  while (s < e && blank(b[s])) s++;
  while (e > s && blank(b[e - 1])) e--;
  let neg = false;
  if (s < e && (b[s] === 45 || b[s] === 43)) {
    neg = b[s] === 45;
    s++;
  }
  if (s === e) return NaN;
  let n = 0;
  for (let i = s; i < e; i++) {
    const d = b[i] - 48;
    if (d >= 0 && d <= 9) n = n * 10 + d;
    else if (b[i] !== 95 || i === s || i === e - 1 || b[i - 1] === 95) {
      return NaN;
    }
  }
  return neg ? -n : n;
}

/**
 * An unsigned address written as `0x...` hex or plain decimal: a number when
 * it is at most 2^53 - 1, a bigint above, undefined for `N/A`, empty or junk.
 */
export function parseAddress(
  b: Uint8Array,
  s: number,
  e: number,
): number | bigint | undefined {
  while (s < e && b[s] === 32) s++;
  while (e > s && b[e - 1] === 32) e--;
  if (s === e) return undefined;
  if (e - s > 2 && b[s] === 48 && (b[s + 1] | 0x20) === 120) {
    let n = 0;
    for (let i = s + 2; i < e; i++) {
      const c = b[i];
      const d = c <= 57
        ? c - 48
        : (c | 0x20) >= 97 && (c | 0x20) <= 102
        ? (c | 0x20) - 87
        : -1;
      if (d < 0 || d > 15) return undefined;
      n = n * 16 + d;
    }
    return n <= Number.MAX_SAFE_INTEGER
      ? n
      : BigInt("0x" + decodeRange(b, s + 2, e));
  }
  const n = parseDecimal(b, s, e);
  if (Number.isNaN(n) || n < 0) return undefined;
  return n <= Number.MAX_SAFE_INTEGER ? n : BigInt(decodeRange(b, s, e));
}

/**
 * Where the value of `key` lies inside an Attr map `{k:v,k:v}` held in
 * [s, e): writes [start, end) into `out` and returns true, or returns false
 * when the key is absent. A key only matches right after `{` or `,`, so a
 * value that happens to contain `size:` does not fool it.
 */
export function findAttrValue(
  b: Uint8Array,
  s: number,
  e: number,
  key: Uint8Array,
  out: Int32Array,
): boolean {
  const k0 = key[0], kn = key.length;
  for (let i = s; i + kn < e; i++) {
    if (b[i] !== k0) continue;
    const before = i === s ? 123 : b[i - 1];
    if (before !== 123 && before !== 44 && before !== 32) continue;
    let j = 1;
    while (j < kn && b[i + j] === key[j]) j++;
    if (j < kn || b[i + kn] !== 58) continue;
    let v = i + kn + 1;
    while (v < e && b[v] === 32) v++;
    let w = v;
    while (w < e && b[w] !== 44 && b[w] !== 125) w++;
    out[0] = v;
    out[1] = w;
    return true;
  }
  return false;
}

/**
 * Turns short, often repeated fields (event names, device ids) into the same
 * string every time without decoding them again: length, first, middle and
 * last byte, mixed, pick a slot, the bytes are compared, and only a miss
 * decodes. Two texts that take turns in one slot miss every time (a new
 * string, a copy of the bytes): the mix keeps msMemScope's own names apart
 * (ATEN_START and ATEN_END, which alternate down every log with ops, shared
 * a slot when length and end bytes were merely shifted together).
 */
export class Interner {
  #keys: Array<Uint8Array | undefined> = new Array(4096).fill(undefined);
  #strings: string[] = new Array(4096).fill("");
  #maxBytes: number;

  /** `maxBytes`: longer texts are decoded every time, never kept. */
  constructor(maxBytes = 40) {
    this.#maxBytes = maxBytes;
  }

  /** The string for bytes [s, e). */
  get(b: Uint8Array, s: number, e: number): string {
    const n = e - s;
    if (n > this.#maxBytes || n === 0) return decodeRange(b, s, e);
    let h = Math.imul(n, 0x9e3779b1) ^ b[s];
    h = Math.imul(h, 0x85ebca6b) ^ b[e - 1];
    h = Math.imul(h, 0xc2b2ae35) ^ b[s + (n >> 1)];
    const slot = (h ^ (h >>> 15)) & 4095;
    const k = this.#keys[slot];
    if (k !== undefined && k.length === n) {
      let i = 0;
      while (i < n && k[i] === b[s + i]) i++;
      if (i === n) return this.#strings[slot];
    }
    const str = decodeRange(b, s, e);
    this.#keys[slot] = b.slice(s, e);
    this.#strings[slot] = str;
    return str;
  }
}

/** Whether bytes [s, e) equal `want`. */
export function bytesEqual(
  b: Uint8Array,
  s: number,
  e: number,
  want: Uint8Array,
): boolean {
  if (e - s !== want.length) return false;
  for (let i = 0; i < want.length; i++) if (b[s + i] !== want[i]) return false;
  return true;
}
