/**
 * Reads one traced process's ring in place. Records are not copied or turned
 * into objects: the handler gets one reused cursor whose getters read the
 * shared mapping, and dump contents are handed on as views into it (zero
 * copies). The tail moves as records are done with, so a producer blocked on
 * a full ring resumes while the rest of a batch is still being written out.
 *
 * @module
 */
import { NameTable } from "./name_table.ts";
import {
  advanceRing,
  heartbeatRing,
  type MappedRing,
  REC,
  RING,
  ringHead,
} from "../ffi/bindings.ts";

const F = REC.F;
const TWO_32 = 2 ** 32;
const decoder = new TextDecoder();
/**
 * Whether a plain load of a record's stamp already orders the loads of its
 * fields after it. x86 never reorders loads with loads, so there a plain
 * read does what Atomics.load does, at half the cost per record of the whole
 * drain loop (Atomics.load is a call into a builtin). Elsewhere (Arm servers)
 * the acquire load is needed.
 */
const ORDERED_LOADS = Deno.build.arch === "x86_64";
/** Free space for the producers at least this often while draining. */
const ADVANCE_EVERY_BYTES = 1 << 20;

/** What a ring's header says about its producer. */
export interface RingHeader {
  pid: number;
  flags: number;
  startNs: number;
  droppedEvents: number;
  checksumAlgo: number;
  cliWatch: string;
  command: string;
  /** The job's OOM_SNAPSHOT_ENABLE: 0 off, 1 state and history, 2 state. */
  oomSnapshot: number;
  /** Where its OOM snapshots go (absolute); "" when off. */
  oomPath: string;
}

/** Reads a little-endian u64 that is known to stay below 2^53. */
export function u64(view: DataView, offset: number): number {
  return view.getUint32(offset, true) +
    view.getUint32(offset + 4, true) * 2 ** 32;
}

function cString(bytes: Uint8Array): string {
  const end = bytes.indexOf(0);
  return decoder.decode(end < 0 ? bytes : bytes.subarray(0, end));
}

/** The record under the reader, valid only inside the drain callback. */
export class RecordCursor {
  #view: DataView;
  #bytes: Uint8Array;
  #u32: Uint32Array;
  #i32: Int32Array;
  #names: NameTable;
  /** Byte offset of the record in the mapping. */
  off = 0;
  type = 0;
  size = 0;

  constructor(view: DataView, bytes: Uint8Array, names: NameTable) {
    this.#view = view;
    this.#bytes = bytes;
    this.#u32 = new Uint32Array(bytes.buffer);
    this.#i32 = new Int32Array(bytes.buffer);
    this.#names = names;
  }

  // Fields through 32-bit views (records are 8-byte aligned, the layout
  // is little-endian): cheaper per read than DataView.
  get flags(): number {
    return this.#u32[(this.off + F.type) >>> 2] >>> 16;
  }
  get tid(): number {
    return this.#u32[(this.off + F.tid) >>> 2];
  }
  get ts(): number {
    const i = (this.off + F.tsNs) >>> 2;
    return this.#u32[i] + this.#u32[i + 1] * TWO_32;
  }
  get device(): number {
    return this.#i32[(this.off + F.device) >>> 2];
  }
  get result(): number {
    return this.#i32[(this.off + F.result) >>> 2];
  }
  get addr(): number {
    const i = (this.off + F.addr) >>> 2;
    return this.#u32[i] + this.#u32[i + 1] * TWO_32;
  }
  get len(): number {
    const i = (this.off + F.len) >>> 2;
    return this.#u32[i] + this.#u32[i + 1] * TWO_32;
  }
  get id(): number {
    const i = (this.off + F.id) >>> 2;
    return this.#u32[i] + this.#u32[i + 1] * TWO_32;
  }
  get aux(): number {
    return this.#u32[(this.off + F.aux) >>> 2];
  }
  get #nameLen(): number {
    return this.#u32[(this.off + F.nameLen) >>> 2];
  }
  /**
   * The id of the name (op type, message, command line) in the ring's
   * {@linkcode NameTable}; -1 once the table is full.
   */
  get nameId(): number {
    return this.#names.intern(this.#u32, this.off + REC.SIZE, this.#nameLen);
  }
  /** Whether the record carries a name (an ALLOC from Python carries a label). */
  get hasName(): boolean {
    return this.#nameLen !== 0;
  }
  /** The name, decoded once per distinct value. */
  get name(): string {
    return this.nameOf(this.nameId);
  }
  /** The name decoded afresh, not kept in the name table: for text that
   * seldom repeats (call stacks), which would crowd op names out of it. */
  get text(): string {
    const start = this.off + REC.SIZE;
    return decoder.decode(this.#bytes.subarray(start, start + this.#nameLen));
  }
  /** The name, given the {@linkcode nameId} already asked for. */
  nameOf(id: number): string {
    if (id >= 0) return this.#names.texts[id];
    const start = this.off + REC.SIZE;
    return decoder.decode(this.#bytes.subarray(start, start + this.#nameLen));
  }
  /** Offset of the payload after the name. */
  get payloadOffset(): number {
    return this.off + REC.SIZE + ((this.#nameLen + 7) & ~7);
  }
  /** A u64 of the payload, below 2^53. */
  payloadU64(index: number): number {
    return u64(this.#view, this.payloadOffset + 8 * index);
  }
  /** A u64 of the payload, whole. */
  payloadBigU64(index: number): bigint {
    return this.#view.getBigUint64(this.payloadOffset + 8 * index, true);
  }
  /** DUMP_DATA contents as a view into the ring. */
  content(): Uint8Array {
    const start = this.payloadOffset;
    return this.#bytes.subarray(start, start + this.len);
  }
}

/** Whoever takes the records of a ring. */
export interface RecordHandler {
  /** One record; the cursor is valid only during the call. */
  record(r: RecordCursor): void;
}

/** Consumer of one ring. */
export class RingReader {
  readonly ring: MappedRing;
  #view: DataView;
  #words: Uint32Array;
  #bytes: Uint8Array;
  #mask: number;
  #tail: number;
  #cursor: RecordCursor;
  /** The names its records carry, by id. */
  readonly names = new NameTable();

  /** Starts where any earlier consumer of this ring stopped. */
  constructor(ring: MappedRing) {
    this.ring = ring;
    this.#view = new DataView(ring.buffer);
    this.#words = new Uint32Array(ring.buffer);
    this.#bytes = new Uint8Array(ring.buffer);
    this.#mask = u64(this.#view, RING.H.capacity) - 1;
    this.#tail = u64(this.#view, RING.H.tail);
    this.#cursor = new RecordCursor(this.#view, this.#bytes, this.names);
  }

  /** The header as it is now. */
  header(): RingHeader {
    const v = this.#view, H = RING.H;
    return {
      pid: v.getInt32(H.pid, true),
      flags: v.getUint32(H.flags, true),
      startNs: u64(v, H.startNs),
      droppedEvents: u64(v, H.droppedEvents),
      checksumAlgo: v.getUint32(H.checksumAlgo, true),
      cliWatch: cString(
        this.#bytes.subarray(H.cliWatch, H.cliWatch + H.cliWatchSize),
      ),
      command: cString(
        this.#bytes.subarray(H.command, H.command + H.commandSize),
      ),
      oomSnapshot: v.getUint32(H.oomSnapshot, true),
      oomPath: cString(
        this.#bytes.subarray(H.oomPath, H.oomPath + H.oomPathSize),
      ),
    };
  }

  /** True when nothing published is left unread. */
  empty(): boolean {
    return this.#tail >= ringHead(this.ring);
  }

  /** How far the producers have published: a position to wait for. */
  published(): number {
    return ringHead(this.ring);
  }

  /** How far this reader has read. */
  position(): number {
    return this.#tail;
  }

  /** Bytes the producers reserved that this reader has not read. */
  unreadBytes(): number {
    return Math.max(0, ringHead(this.ring) - this.#tail);
  }

  /** Whether every record before `position` has been read. */
  readPast(position: number): boolean {
    return this.#tail >= position;
  }

  /** Tells the producers the daemon is alive. */
  heartbeat(): void {
    heartbeatRing(this.ring);
  }

  /**
   * Hands every published record to `to.record`, up to `budget` records.
   * A method of one class, not a closure per process: the call site then
   * stays monomorphic however many processes the daemon has followed, and
   * the handler can be inlined into this loop.
   * Stops at the first record still being written.
   */
  drain(to: RecordHandler, budget = 1 << 20): number {
    const head = ringHead(this.ring);
    const words = this.#words, cursor = this.#cursor;
    let tail = this.#tail, n = 0, freed = tail;
    while (tail < head && n < budget) {
      const off = RING.DATA_OFFSET + (tail & this.#mask);
      const stamp = ORDERED_LOADS
        ? words[off >>> 2]
        : Atomics.load(words, off >>> 2);
      if (stamp !== ((Math.floor(tail / 8) | 1) >>> 0)) break;
      const size = words[(off + F.size) >>> 2];
      const type = words[(off + F.type) >>> 2] & 0xffff;
      if (type !== REC.PAD) {
        cursor.off = off;
        cursor.type = type;
        cursor.size = size;
        to.record(cursor);
        n++;
      }
      tail += size;
      if (tail - freed >= ADVANCE_EVERY_BYTES) {
        advanceRing(this.ring, tail);
        freed = tail;
      }
    }
    if (tail !== this.#tail) {
      this.#tail = tail;
      if (freed !== tail) advanceRing(this.ring, tail);
    }
    return n;
  }
}
