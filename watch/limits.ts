/**
 * Size limits shared by the CLI parser, the dump file names and the HTTP edge,
 * and the two string checks they all need. The op-name limit comes from the
 * ring (`SW_OP_NAME_MAX` in ffi/include/stompwatch_ring.h, NUL included); the
 * watch-name limits keep every dump file name under the 255-byte limit of
 * Linux file systems.
 *
 * @module
 */

/** Longest op name in UTF-8 bytes: the ring holds 96 bytes including the NUL. */
export const MAX_OP_NAME_BYTES = 95;

/** Longest watch name in characters, as the real tool allows. */
export const MAX_WATCH_NAME_CHARS = 64;

/**
 * Longest watch name in UTF-8 bytes, so that the longest `.bin` name (10-digit
 * device, tid and outid, 16-digit call count, 95-byte op) stays within
 * {@linkcode MAX_FILE_NAME_BYTES}.
 */
export const MAX_WATCH_NAME_BYTES = 96;

/** Longest file name Linux file systems accept. */
export const MAX_FILE_NAME_BYTES = 255;

const encoder = new TextEncoder();

/**
 * Length of a string in UTF-8 bytes.
 *
 * @example
 * ```ts
 * import { utf8ByteLength } from "./limits.ts";
 * utf8ByteLength("算子"); // 6
 * ```
 */
export function utf8ByteLength(text: string): number {
  return encoder.encode(text).length;
}

/**
 * Whether a string holds a C0 control character or DEL (NUL included), which
 * have no place in op names, watch names or file names.
 *
 * @example
 * ```ts
 * import { hasControlChar } from "./limits.ts";
 * hasControlChar("a\u0000b"); // true
 * ```
 */
export function hasControlChar(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** API watches one process can have at once: the ring's watch table size
 * (`SW_WATCH_MAX` in ffi/include/stompwatch_ring.h). */
export const MAX_API_WATCHES = 256;
