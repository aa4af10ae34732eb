/**
 * Writing a snapshot file without ever replacing one: the bytes go to a
 * hidden part file beside it, which is then linked under the final name (a
 * link fails where a file is) and removed.
 *
 * @module
 */
import { holdPart, writeAll } from "../files.ts";
import { JsonWriter, PickleWriter, type SnapshotWriter } from "./emit.ts";

/**
 * Creates `path` with what `fill` writes through a writer of `format`.
 * Refuses an existing `path`; removes the part file on any failure.
 *
 * @example
 * ```ts
 * import { createSnapshotFile } from "./file.ts";
 * await createSnapshotFile("s.json", "json", (w) => {
 *   w.dictStart(); w.dictEnd(); w.finish(); return 0;
 * });
 * ```
 */
export async function createSnapshotFile<T>(
  path: string,
  format: "pickle" | "json",
  fill: (w: SnapshotWriter) => T | Promise<T>,
): Promise<{ summary: T; bytes: number }> {
  return await createNewFile(path, async (file) => {
    let bytes = 0;
    const sink = (b: Uint8Array) => {
      writeAll(file, b);
      bytes += b.length;
    };
    const w = format === "json" ? new JsonWriter(sink) : new PickleWriter(sink);
    const summary = await fill(w);
    return { summary, bytes };
  });
}

/**
 * Creates `path` with what `write` puts into its part file (given open, and
 * by its path for a writer outside this process, such as native code).
 * Refuses an existing `path`; removes the part file on any failure.
 *
 * @example
 * ```ts
 * import { createNewFile } from "./file.ts";
 * await createNewFile("s.json", (file) => {
 *   file.writeSync(new TextEncoder().encode("{}"));
 * });
 * ```
 */
export async function createNewFile<T>(
  path: string,
  write: (file: Deno.FsFile, part: string) => T | Promise<T>,
): Promise<T> {
  const name = path.slice(path.lastIndexOf("/") + 1);
  if (name === "" || name === "." || name === "..") {
    throw new Error(
      `Cannot write ${path}: it names a directory, not a file; name a new file in it`,
    );
  }
  const { dir, stem } = partStemOf(path);
  // Taken before anything is awaited: a write begun meanwhile picks another.
  using held = holdPart(stem);
  return await writePart(path, { dir, part: held.part }, write);
}

/** createNewFile's work, once `part` is this call's own. */
async function writePart<T>(
  path: string,
  { dir, part }: { dir: string; part: string },
  write: (file: Deno.FsFile, part: string) => T | Promise<T>,
): Promise<T> {
  if (await exists(path, dir)) {
    throw new Deno.errors.AlreadyExists(
      `Cannot write ${path}: a file of that name exists and is never replaced; pick a new name`,
    );
  }
  let file: Deno.FsFile;
  try {
    // A part of this name that this process is not writing was left by an
    // earlier process of the same pid, killed: the name is this one's now.
    await Deno.remove(part).catch(() => {});
    file = await Deno.open(part, { write: true, createNew: true, mode: 0o600 });
  } catch (e) {
    throw new Error(`Cannot write ${path}: ${placeRefusal(e, dir)}`);
  }
  try {
    const result = await write(file, part);
    file.close();
    try {
      await Deno.link(part, path);
    } catch (e) {
      if (e instanceof Deno.errors.AlreadyExists) {
        throw new Deno.errors.AlreadyExists(
          `Cannot write ${path}: a file of that name appeared meanwhile and is never replaced; pick a new name`,
        );
      }
      throw e;
    }
    return result;
  } catch (e) {
    try {
      file.close();
    } catch { /* closed already */ }
    throw e;
  } finally {
    await Deno.remove(part).catch(() => {});
  }
}

/**
 * Where `path` is written first: a hidden part file beside it, named after
 * it and this process (the stem, to which `holdPart` adds `.part`); a
 * shorter name where that one would pass the 255 bytes a file name may
 * have.
 *
 * @example
 * ```ts
 * import { partStemOf } from "./file.ts";
 * partStemOf("out/s.pickle").stem; // "out/.s.pickle.<pid>"
 * ```
 */
export function partStemOf(path: string): { dir: string; stem: string } {
  const slash = path.lastIndexOf("/");
  const dir = slash < 0 ? "." : path.slice(0, slash) || "/";
  const name = `.${path.slice(slash + 1)}.${Deno.pid}`;
  const fits = new TextEncoder().encode(name).length <= 240;
  return { dir, stem: `${dir}/${fits ? name : `.stompwatch.${Deno.pid}`}` };
}

/** Why a file cannot be made in `dir`, from the error of trying. */
function placeRefusal(e: unknown, dir: string): string {
  if (e instanceof Deno.errors.NotFound) {
    return `${dir} does not exist; create it or pick another place`;
  }
  if (e instanceof Deno.errors.PermissionDenied) {
    return `${dir} is not writable; pick another place`;
  }
  // Deno's own refusal (devices, /proc, a place not granted) names flags
  // a stompwatch user cannot pass.
  if (e instanceof Deno.errors.NotCapable) {
    return `stompwatch does not write files in ${dir} (devices and system places are refused); name a new file in a directory of your own`;
  }
  return systemReason(e);
}

/**
 * What the system said, as the end of a sentence: without Deno's
 * `(os error N)` and the call and path it adds, and with what to do where
 * that is plain.
 *
 * @example
 * ```ts
 * import { systemReason } from "./file.ts";
 * systemReason(new Error("No space left on device (os error 28)"));
 * // "no space left on device; free some space or pick another place"
 * ```
 */
export function systemReason(e: unknown): string {
  const text = String((e as Error)?.message ?? e).split("\n")[0]
    .replace(/: (open|lstat|write|link) '.*$/, "")
    .replace(/ \(os error \d+\)$/, "");
  const reason = text.charAt(0).toLowerCase() + text.slice(1);
  const advice = /no space left|quota/i.test(text)
    ? "free some space or pick another place"
    : /read-only file system/i.test(text)
    ? "pick a place that can be written"
    : /file name too long/i.test(text)
    ? "pick a shorter name"
    : "";
  return advice ? `${reason}; ${advice}` : reason;
}

/** Whether `path` names something; only "not found" means no. */
async function exists(path: string, dir: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw new Error(`Cannot write ${path}: ${placeRefusal(e, dir)}`);
  }
}
