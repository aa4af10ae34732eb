/**
 * Opening one file of the dump directory for `GET /dumps/{file}`, refusing
 * any name that could reach outside it: separators, NUL, `.`/`..`, symbolic
 * links, and anything whose real path is not directly inside the directory.
 *
 * @module
 */

import { MAX_FILE_NAME_BYTES, utf8ByteLength } from "../watch/limits.ts";
import { badRequest, HttpError } from "./_errors.ts";

/** An open dump file with what the response needs. */
export interface OpenDump {
  file: Deno.FsFile;
  size: number;
  contentType: string;
}

const TYPES: Record<string, string> = {
  bin: "application/octet-stream",
  csv: "text/csv; charset=utf-8",
  json: "application/json",
};

/**
 * Opens `name` inside `dumpDir` for reading.
 *
 * @throws {HttpError} 400 for a name that is not a plain file inside the
 * directory, 404 when it does not exist.
 * @example
 * ```ts
 * import { openDump } from "./_dump_file.ts";
 * const dump = await openDump(Deno.makeTempDirSync(), "0_1_Mul_1-w_0_after.bin").catch(() => null);
 * ```
 */
export async function openDump(
  dumpDir: string,
  name: string,
): Promise<OpenDump> {
  const refuse = (why: string): never =>
    badRequest(
      `Invalid dump file name: ${
        JSON.stringify(name)
      } ${why}; use a name from GET /dumps`,
    );
  // A backslash is a plain character on Linux: names with one are served.
  if (name === "" || name === "." || name === ".." || /[/\0]/.test(name)) {
    refuse("is not a plain file name");
  }
  if (utf8ByteLength(name) > MAX_FILE_NAME_BYTES) {
    throw new HttpError(
      404,
      `No such dump file: the name is ${
        utf8ByteLength(name)
      } bytes long, no file name is longer than ${MAX_FILE_NAME_BYTES}; use a name from GET /dumps`,
    );
  }
  const path = `${dumpDir}/${name}`;
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (error) {
    const missing = error instanceof Deno.errors.NotFound ||
      error instanceof Deno.errors.NotADirectory;
    if (!missing) throw error;
    throw new HttpError(
      404,
      `No such dump file: ${name}; use a name from GET /dumps`,
    );
  }
  if (info.isSymlink) refuse("is a symbolic link");
  if (!info.isFile) refuse("is not a regular file");
  const [real, realDir] = await Promise.all([
    Deno.realPath(path),
    Deno.realPath(dumpDir),
  ]);
  if (real !== `${realDir}/${name}`) {
    refuse("resolves outside the dump directory");
  }
  const file = await Deno.open(path, { read: true });
  const extension = name.slice(name.lastIndexOf(".") + 1);
  return {
    file,
    size: (await file.stat()).size,
    contentType: TYPES[extension] ?? "application/octet-stream",
  };
}
