/**
 * The rules every file stompwatch writes follows: its name carries the
 * local time as msMemScope stamps its files (`YYYYmmddHHMMSS`), every byte
 * handed to the file system is written, however few one call takes, and
 * the hidden part file it is written to first is known to the process, so
 * that a command stopped by a signal removes it.
 *
 * @module
 */

/**
 * `YYYYmmddHHMMSS` in local time, as msMemScope stamps its file names.
 *
 * @example
 * ```ts
 * import { fileStamp } from "./files.ts";
 * fileStamp(new Date(2026, 10, 20, 23, 17, 33)); // "20261120231733"
 * ```
 */
export function fileStamp(date: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return `${String(date.getFullYear()).padStart(4, "0")}${
    two(date.getMonth() + 1)
  }${two(date.getDate())}${two(date.getHours())}${two(date.getMinutes())}${
    two(date.getSeconds())
  }`;
}

/**
 * Writes all of `bytes` to `file`: `writeSync` may write fewer bytes than
 * asked, so it is called until none are left.
 *
 * @throws whatever `writeSync` throws; some bytes may have been written.
 * @example
 * ```ts
 * import { writeAll } from "./files.ts";
 * const path = Deno.makeTempFileSync();
 * using f = Deno.openSync(path, { write: true });
 * writeAll(f, new TextEncoder().encode("a,b\n"));
 * ```
 */
export function writeAll(file: Deno.FsFile, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) {
    const n = file.writeSync(bytes.subarray(written));
    if (n <= 0) throw new Error("the file system accepted no bytes");
    written += n;
  }
}

/** Part files this process is writing now, each name once. */
const partsInProgress = new Set<string>();

/**
 * Takes the name of a part file this process is about to write, `stem` +
 * `.part`, or with a number before `.part` while this process writes one of
 * that name already (two writes at once never share a part file); held
 * until disposed.
 *
 * @example
 * ```ts
 * import { holdPart } from "./files.ts";
 * using held = holdPart("out/.memory_compare.42");
 * console.log(held.part); // "out/.memory_compare.42.part"
 * ```
 */
export function holdPart(stem: string): { part: string } & Disposable {
  let part = `${stem}.part`;
  for (let n = 1; partsInProgress.has(part); n++) part = `${stem}.${n}.part`;
  partsInProgress.add(part);
  return { part, [Symbol.dispose]: () => partsInProgress.delete(part) };
}

/**
 * Removes the part files this process is writing: for a command stopped by
 * a signal, which ends without running `finally` blocks.
 *
 * @example
 * ```ts
 * import { removePartsInProgress } from "./files.ts";
 * Deno.addSignalListener("SIGINT", () => {
 *   removePartsInProgress();
 *   Deno.exit(130);
 * });
 * ```
 */
export function removePartsInProgress(): void {
  for (const part of partsInProgress) {
    try {
      Deno.removeSync(part);
    } catch { /* linked and removed already */ }
  }
}
