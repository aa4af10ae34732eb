/**
 * Writes what the watches sample into `OUT/watch_dump`: `.bin` files for
 * full-content samples (streamed into a hidden part file, then linked under
 * its name, so a reader never sees half a dump and no earlier dump is
 * replaced) and one checksum CSV per traced process and
 * device. Every file is 0600 and made under a name no file had. Keeps the
 * index `GET /dumps` answers from.
 *
 * @module
 */
import {
  binFileName,
  type BinNameParts,
  checksumCsvName,
} from "./dump_names.ts";
import { CHECKSUM_CSV_HEADER, checksumCsvRow } from "./checksum_csv.ts";
import { IoProblems } from "./io_problems.ts";
import { writeAll } from "../analysis/files.ts";
import { RowFile } from "./row_file.ts";
import type { DumpFilter, DumpInfo } from "./types.ts";

const encoder = new TextEncoder();

/**
 * The largest write of a dump's bytes: a full-content chunk (up to 4 MiB)
 * is written in pieces of this size, as dd writes its blocks. A write of 2
 * MiB or more gets 2 MiB page-cache folios, and the kernel's copy into them
 * cost 0.83-2.84 s of the daemon's CPU per 1.5 GiB of dumps with 4 MiB
 * writes (1.50-2.74 s with 2 MiB) on the 2-vCPU Firecracker VM of
 * 2026-11-25, against 0.74-0.81 s with 1 MiB or 256 KiB writes, in
 * alternating runs. Likely why: whole 2 MiB blocks are the ones its balloon
 * hands back to the host (page_reporting_order 9), each page then faulted
 * in again.
 */
const WRITE_PIECE = 1 << 20;

interface OpenPart {
  file: Deno.FsFile | undefined;
  path: string;
  bytes: number;
  /** Why the content could not be written, once it could not. */
  error?: unknown;
}

interface OpenCsv {
  out: RowFile;
  info: DumpInfo;
}

/** Where a {@linkcode DumpWriter} reports what it could not write. */
export interface DumpWriterOptions {
  problems?: IoProblems;
  /** Passed to each checksum CSV: told its size after each row written. */
  onCommitted?: (path: string, size: number) => void;
}

/**
 * The writer for one daemon's dump directory. A write error never throws
 * out of it: checksum rows are kept and written later (see
 * {@linkcode RowFile}); a `.bin` sample that cannot be written is dropped
 * and counted in {@linkcode IoProblems}, its checksum still in the CSV.
 */
export class DumpWriter {
  readonly dir: string;
  readonly problems: IoProblems;
  #onCommitted?: (path: string, size: number) => void;
  #parts = new Map<string, OpenPart>();
  #csvs = new Map<string, OpenCsv>();
  /** Files of finished processes whose rows still wait to be written. */
  #closing: RowFile[] = [];
  #index: DumpInfo[] = [];

  /** Creates the directory (0700) if needed. */
  constructor(dir: string, options: DumpWriterOptions = {}) {
    this.dir = dir;
    this.problems = options.problems ?? new IoProblems();
    this.#onCommitted = options.onCommitted;
    try {
      Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (e) {
      if (e instanceof Deno.errors.NotCapable) throw e; // main.ts says it
      throw new Error(
        `Cannot create the dump directory ${dir}: ${
          (e as Error).message
        }; give an --output directory you can write`,
      );
    }
  }

  /** Appends the next chunk of a full-content sample. */
  appendContent(pid: number, dumpSeq: number, bytes: Uint8Array): void {
    const key = `${pid}.${dumpSeq}`;
    let part = this.#parts.get(key);
    if (!part) {
      part = { file: undefined, path: `${this.dir}/.${key}.part`, bytes: 0 };
      this.#parts.set(key, part);
      try {
        part.file = Deno.openSync(part.path, {
          write: true,
          create: true,
          truncate: true, // a part file is ours alone: never a finished dump
          mode: 0o600,
        });
      } catch (e) {
        part.error = e;
      }
    }
    part.bytes += bytes.length;
    if (part.error) return;
    try {
      for (let at = 0; at < bytes.length; at += WRITE_PIECE) {
        writeAll(part.file!, bytes.subarray(at, at + WRITE_PIECE));
      }
    } catch (e) {
      part.error = e;
      this.#discard(part);
    }
  }

  /**
   * Completes a full-content sample under its final name; returns that name.
   * Names carry no pid: a name an earlier dump in this directory holds (a
   * later run with a reused tid) is never replaced; the sample takes the
   * first free `{name}.{n}.bin` (n = 1, 2, ...) instead.
   */
  finishContent(pid: number, dumpSeq: number, parts: BinNameParts): string {
    const key = `${pid}.${dumpSeq}`;
    let name = binFileName(parts);
    const part = this.#parts.get(key);
    this.#parts.delete(key);
    try {
      if (part?.error) throw part.error;
      if (part) {
        part.file!.close();
        part.file = undefined;
        name = this.#linkFree(part.path, parts);
        Deno.removeSync(part.path);
      } else {
        name = this.#createFree(parts);
      }
    } catch (e) {
      if (part) this.#discard(part);
      // One entry for all samples, not one message per file.
      this.problems.dropped(this.#binKey(), 1, e);
      return name;
    }
    this.problems.recovered(this.#binKey());
    this.#index.push({
      file: name,
      kind: "bin",
      pid,
      device: parts.device,
      tid: parts.tid,
      op: parts.op,
      callCount: parts.callCount,
      name: parts.name,
      phase: parts.phase,
      bytes: part?.bytes ?? 0,
    });
    return name;
  }

  /** Appends one row to the checksum CSV of this process and device; returns the row's first column. */
  writeChecksum(pid: number, parts: BinNameParts, checksum: bigint): string {
    const csv = this.#csv(pid, parts.device);
    const bytes = encoder.encode(checksumCsvRow(parts, checksum) + "\n");
    csv.out.write(bytes);
    csv.info.bytes += bytes.length;
    return binFileName(parts).slice(0, -".bin".length);
  }

  /** Tries every checksum CSV that could not be written again. */
  retry(): void {
    for (const csv of this.#csvs.values()) csv.out.retry();
    this.#closing = this.#closing.filter((out) => !out.closeWhenWritten());
  }

  /** Closes every file; rows that still cannot be written are counted as dropped. */
  close(): void {
    for (const key of [...this.#csvs.keys()]) {
      this.closeProcess(Number(key.split(".")[0]));
    }
    for (const out of this.#closing) out.close();
    this.#closing = [];
  }

  #csv(pid: number, device: number): OpenCsv {
    const key = `${pid}.${device}`;
    const open = this.#csvs.get(key);
    if (open) return open;
    const when = Date.now();
    const info: DumpInfo = {
      file: "",
      kind: "checksum_csv",
      pid,
      device,
      bytes: CHECKSUM_CSV_HEADER.length + 1,
    };
    const out = new RowFile({
      dir: this.dir,
      // Two processes starting in the same second would share a name: the
      // next free second keeps their files apart.
      name: (i) => checksumCsvName(device, new Date(when + i * 1000)),
      header: encoder.encode(CHECKSUM_CSV_HEADER + "\n"),
      problems: this.problems,
      onCommitted: this.#onCommitted,
      onCreated: (path) => {
        info.file = path.slice(this.dir.length + 1);
        this.#index.push(info);
      },
    });
    const entry = { out, info };
    this.#csvs.set(key, entry);
    return entry;
  }

  /** Links `from` under the first free name of the sample; returns that name. */
  #linkFree(from: string, parts: BinNameParts): string {
    for (let n = 0;; n++) {
      const name = binFileName(parts, n);
      try {
        Deno.linkSync(from, `${this.dir}/${name}`); // refuses a name taken
        return name;
      } catch (e) {
        if (!(e instanceof Deno.errors.AlreadyExists) || n >= 10_000) throw e;
      }
    }
  }

  /** Creates an empty dump under the first free name of the sample. */
  #createFree(parts: BinNameParts): string {
    for (let n = 0;; n++) {
      const name = binFileName(parts, n);
      try {
        Deno.writeFileSync(`${this.dir}/${name}`, new Uint8Array(0), {
          createNew: true,
          mode: 0o600,
        });
        return name;
      } catch (e) {
        if (!(e instanceof Deno.errors.AlreadyExists) || n >= 10_000) throw e;
      }
    }
  }

  #binKey(): string {
    return `${this.dir}/*.bin`;
  }

  #discard(part: OpenPart): void {
    try {
      part.file?.close();
      part.file = undefined;
      Deno.removeSync(part.path);
    } catch { /* gone already, or the directory refuses: it stays hidden */ }
  }

  /** Drops a content sample that will never complete (its process died). */
  abandon(pid: number): void {
    for (const [key, part] of this.#parts) {
      if (!key.startsWith(`${pid}.`)) continue;
      this.#discard(part);
      this.#parts.delete(key);
    }
  }

  /** Closes the files of one process. */
  closeProcess(pid: number): void {
    this.abandon(pid);
    for (const [key, csv] of this.#csvs) {
      if (!key.startsWith(`${pid}.`)) continue;
      if (!csv.out.closeWhenWritten()) this.#closing.push(csv.out);
      this.#csvs.delete(key);
    }
  }

  /** The files written so far, narrowed by the filter. */
  list(filter: DumpFilter): DumpInfo[] {
    return this.#index.filter((d) =>
      (filter.pid === undefined || d.pid === filter.pid) &&
      (filter.name === undefined || d.kind === "checksum_csv" ||
        d.name === filter.name) &&
      (filter.op === undefined || d.kind === "checksum_csv" ||
        d.op === filter.op)
    );
  }
}
