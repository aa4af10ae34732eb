/**
 * Reads one traced process's ring in place. Records are not copied or turned
 * into objects: the handler gets one reused cursor whose getters read the
 * shared mapping, and dump contents are handed on as views into it (zero
 * copies). The tail moves as records are done with, so a producer blocked on
 * a full ring resumes while the rest of a batch is still being written out.
 *
 * @module
 */
import {
  advanceRing,
  heartbeatRing,
  type MappedRing,
  REC,
  RING,
  ringHead,
} from "../ffi/bindings.ts";

const F = REC.F;
const decoder = new TextDecoder();
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

/**
 * Op names repeat endlessly; decoding each again would dominate the pump.
 * Names are keyed by a hash of their bytes and checked byte for byte.
 */
class NameCache {
  #map = new Map<number, { bytes: Uint8Array; text: string }>();

  get(bytes: Uint8Array, start: number, len: number): string {
    let h = 0x811c9dc5 ^ len;
    for (let i = 0; i < len; i++) {
      h = Math.imul(h ^ bytes[start + i], 0x01000193);
    }
    const hit = this.#map.get(h);
    if (hit && hit.bytes.length === len) {
      let same = true;
      for (let i = 0; i < len && same; i++) {
        same = hit.bytes[i] === bytes[start + i];
      }
      if (same) return hit.text;
    }
    const copy = bytes.slice(start, start + len);
    const text = decoder.decode(copy);
    if (this.#map.size < 65536) this.#map.set(h, { bytes: copy, text });
    return text;
  }
}

/** The record under the reader, valid only inside the drain callback. */
export class RecordCursor {
  #view: DataView;
  #bytes: Uint8Array;
  #names: NameCache;
  /** Byte offset of the record in the mapping. */
  off = 0;
  type = 0;
  size = 0;

  constructor(view: DataView, bytes: Uint8Array, names: NameCache) {
    this.#view = view;
    this.#bytes = bytes;
    this.#names = names;
  }

  get flags(): number {
    return this.#view.getUint16(this.off + F.flags, true);
  }
  get tid(): number {
    return this.#view.getUint32(this.off + F.tid, true);
  }
  get ts(): number {
    return u64(this.#view, this.off + F.tsNs);
  }
  get device(): number {
    return this.#view.getInt32(this.off + F.device, true);
  }
  get result(): number {
    return this.#view.getInt32(this.off + F.result, true);
  }
  get addr(): number {
    return u64(this.#view, this.off + F.addr);
  }
  get len(): number {
    return u64(this.#view, this.off + F.len);
  }
  get id(): number {
    return u64(this.#view, this.off + F.id);
  }
  get aux(): number {
    return this.#view.getUint32(this.off + F.aux, true);
  }
  get #nameLen(): number {
    return this.#view.getUint32(this.off + F.nameLen, true);
  }
  /** The name (op type, message, command line), decoded once per distinct value. */
  get name(): string {
    const n = this.#nameLen;
    return n ? this.#names.get(this.#bytes, this.off + REC.SIZE, n) : "";
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

/** Consumer of one ring. */
export class RingReader {
  readonly ring: MappedRing;
  #view: DataView;
  #words: Uint32Array;
  #bytes: Uint8Array;
  #mask: number;
  #tail: number;
  #cursor: RecordCursor;

  /** Starts where any earlier consumer of this ring stopped. */
  constructor(ring: MappedRing) {
    this.ring = ring;
    this.#view = new DataView(ring.buffer);
    this.#words = new Uint32Array(ring.buffer);
    this.#bytes = new Uint8Array(ring.buffer);
    this.#mask = u64(this.#view, RING.H.capacity) - 1;
    this.#tail = u64(this.#view, RING.H.tail);
    this.#cursor = new RecordCursor(this.#view, this.#bytes, new NameCache());
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
    };
  }

  /** True when nothing published is left unread. */
  empty(): boolean {
    return this.#tail >= ringHead(this.ring);
  }

  /** Tells the producers the daemon is alive. */
  heartbeat(): void {
    heartbeatRing(this.ring);
  }

  /**
   * Hands every published record to `onRecord`, up to `budget` records.
   * Stops at the first record still being written.
   */
  drain(onRecord: (r: RecordCursor) => void, budget = 1 << 20): number {
    const head = ringHead(this.ring);
    const v = this.#view, words = this.#words, cursor = this.#cursor;
    let tail = this.#tail, n = 0, freed = tail;
    while (tail < head && n < budget) {
      const off = RING.DATA_OFFSET + (tail & this.#mask);
      if (
        Atomics.load(words, off >>> 2) !== ((Math.floor(tail / 8) | 1) >>> 0)
      ) break;
      const size = v.getUint32(off + F.size, true);
      const type = v.getUint16(off + F.type, true);
      if (type !== REC.PAD) {
        cursor.off = off;
        cursor.type = type;
        cursor.size = size;
        onRecord(cursor);
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
