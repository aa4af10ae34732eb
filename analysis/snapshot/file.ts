/**
 * Writing a snapshot file without ever replacing one: the bytes go to a
 * hidden part file beside it, which is then linked under the final name (a
 * link fails where a file is) and removed.
 *
 * @module
 */
import { writeAll } from "../files.ts";
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
  const { dir, part } = partFileOf(path);
  if (await exists(path, dir)) {
    throw new Deno.errors.AlreadyExists(
      `Cannot write ${path}: a file of that name exists and is never replaced; pick a new name`,
    );
  }
  let file: Deno.FsFile;
  try {
    // A part of this name is left by an earlier process of the same pid
    // that was killed: this process owns the name now.
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
 * it and this process; a shorter name where that one would pass the 255
 * bytes a file name may have.
 *
 * @example
 * ```ts
 * import { partFileOf } from "./file.ts";
 * partFileOf("out/s.pickle").part; // "out/.s.pickle.<pid>.part"
 * ```
 */
export function partFileOf(path: string): { dir: string; part: string } {
  const slash = path.lastIndexOf("/");
  const dir = slash < 0 ? "." : path.slice(0, slash) || "/";
  const name = `.${path.slice(slash + 1)}.${Deno.pid}.part`;
  const fits = new TextEncoder().encode(name).length <= 255;
  return {
    dir,
    part: `${dir}/${fits ? name : `.stompwatch.${Deno.pid}.part`}`,
  };
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
  return (e as Error).message.split("\n")[0].replace(/: open '.*$/, "");
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
