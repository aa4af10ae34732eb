/**
 * Writes what the watches sample into `OUT/watch_dump`: `.bin` files for
 * full-content samples (streamed into a hidden part file, then renamed, so a
 * reader never sees half a dump) and one checksum CSV per traced process and
 * device. Every file is 0600. Keeps the index `GET /dumps` answers from.
 *
 * @module
 */
import {
  binFileName,
  type BinNameParts,
  checksumCsvName,
} from "./dump_names.ts";
import { CHECKSUM_CSV_HEADER, checksumCsvRow } from "./checksum_csv.ts";
import type { DumpFilter, DumpInfo } from "./types.ts";

const encoder = new TextEncoder();

interface OpenPart {
  file: Deno.FsFile;
  path: string;
  bytes: number;
}

interface OpenCsv {
  file: Deno.FsFile;
  info: DumpInfo;
}

/** The writer for one daemon's dump directory. */
export class DumpWriter {
  readonly dir: string;
  #parts = new Map<string, OpenPart>();
  #csvs = new Map<string, OpenCsv>();
  #index: DumpInfo[] = [];

  /** Creates the directory (0700) if needed. */
  constructor(dir: string) {
    this.dir = dir;
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  /** Appends the next chunk of a full-content sample. */
  appendContent(pid: number, dumpSeq: number, bytes: Uint8Array): void {
    const key = `${pid}.${dumpSeq}`;
    let part = this.#parts.get(key);
    if (!part) {
      const path = `${this.dir}/.${key}.part`;
      const file = Deno.openSync(path, {
        write: true,
        create: true,
        truncate: true,
        mode: 0o600,
      });
      part = { file, path, bytes: 0 };
      this.#parts.set(key, part);
    }
    let written = 0;
    while (written < bytes.length) {
      written += part.file.writeSync(bytes.subarray(written));
    }
    part.bytes += bytes.length;
  }

  /** Completes a full-content sample under its final name; returns that name. */
  finishContent(pid: number, dumpSeq: number, parts: BinNameParts): string {
    const key = `${pid}.${dumpSeq}`;
    const name = binFileName(parts);
    const part = this.#parts.get(key);
    this.#parts.delete(key);
    if (part) {
      part.file.close();
      Deno.renameSync(part.path, `${this.dir}/${name}`);
    } else {
      Deno.writeFileSync(`${this.dir}/${name}`, new Uint8Array(0), {
        mode: 0o600,
      });
    }
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
    const row = checksumCsvRow(parts, checksum) + "\n";
    const bytes = encoder.encode(row);
    // One write per row: a reader or a crash never sees half a row.
    csv.file.writeSync(bytes);
    csv.info.bytes += bytes.length;
    return binFileName(parts).slice(0, -".bin".length);
  }

  #csv(pid: number, device: number): OpenCsv {
    const key = `${pid}.${device}`;
    const open = this.#csvs.get(key);
    if (open) return open;
    // Two processes starting in the same second would share a name: take
    // the next free second instead, so their files stay apart.
    const when = new Date();
    let name = checksumCsvName(device, when);
    while (this.#existing(name)) {
      when.setSeconds(when.getSeconds() + 1);
      name = checksumCsvName(device, when);
    }
    const tmp = `${this.dir}/.${name}.part`;
    Deno.writeTextFileSync(tmp, CHECKSUM_CSV_HEADER + "\n", { mode: 0o600 });
    Deno.renameSync(tmp, `${this.dir}/${name}`);
    const file = Deno.openSync(`${this.dir}/${name}`, { append: true });
    const info: DumpInfo = {
      file: name,
      kind: "checksum_csv",
      pid,
      device,
      bytes: CHECKSUM_CSV_HEADER.length + 1,
    };
    this.#index.push(info);
    const entry = { file, info };
    this.#csvs.set(key, entry);
    return entry;
  }

  #existing(name: string): boolean {
    try {
      Deno.statSync(`${this.dir}/${name}`);
      return true;
    } catch {
      return false;
    }
  }

  /** Drops a content sample that will never complete (its process died). */
  abandon(pid: number): void {
    for (const [key, part] of this.#parts) {
      if (!key.startsWith(`${pid}.`)) continue;
      part.file.close();
      Deno.removeSync(part.path);
      this.#parts.delete(key);
    }
  }

  /** Closes the files of one process. */
  closeProcess(pid: number): void {
    this.abandon(pid);
    for (const [key, csv] of this.#csvs) {
      if (!key.startsWith(`${pid}.`)) continue;
      csv.file.close();
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
