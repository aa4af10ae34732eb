/**
 * Reads one traced process's ring in place: records are decoded straight
 * from the shared mapping, and dump contents are handed on as views into it
 * (zero copies) before the tail moves past them.
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

/** One record as it sits in the ring; views are valid only inside the callback. */
export interface RawRecord {
  type: number;
  flags: number;
  tid: number;
  ts: number;
  device: number;
  result: number;
  addr: number;
  len: number;
  id: number;
  aux: number;
  name: string;
  /** Bytes after the name: output pairs, dump payloads or dump contents. */
  payload: Uint8Array;
  payloadView: DataView;
}

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

/** Consumer of one ring. */
export class RingReader {
  readonly ring: MappedRing;
  #view: DataView;
  #words: Uint32Array;
  #bytes: Uint8Array;
  #mask: number;
  #tail: number;

  /** Starts where any earlier consumer of this ring stopped. */
  constructor(ring: MappedRing) {
    this.ring = ring;
    this.#view = new DataView(ring.buffer);
    this.#words = new Uint32Array(ring.buffer);
    this.#bytes = new Uint8Array(ring.buffer);
    this.#mask = u64(this.#view, RING.H.capacity) - 1;
    this.#tail = u64(this.#view, RING.H.tail);
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
   * Hands every published record to `onRecord`, up to `budget` records, and
   * frees their space. Stops at the first record still being written.
   */
  drain(onRecord: (r: RawRecord) => void, budget = 1 << 20): number {
    const head = ringHead(this.ring);
    const v = this.#view;
    let tail = this.#tail, n = 0;
    while (tail < head && n < budget) {
      const off = RING.DATA_OFFSET + (tail & this.#mask);
      const stamp = Atomics.load(this.#words, off >>> 2);
      if (stamp !== ((Math.floor(tail / 8) | 1) >>> 0)) break;
      const size = v.getUint32(off + F.size, true);
      const type = v.getUint16(off + F.type, true);
      if (type !== REC.PAD) {
        onRecord(this.#decode(off, type, size));
        n++;
      }
      tail += size;
    }
    if (tail !== this.#tail) {
      this.#tail = tail;
      advanceRing(this.ring, tail);
    }
    return n;
  }

  #decode(off: number, type: number, size: number): RawRecord {
    const v = this.#view;
    const nameLen = v.getUint32(off + F.nameLen, true);
    const nameStart = off + REC.SIZE;
    const payloadStart = nameStart + ((nameLen + 7) & ~7);
    const len = u64(v, off + F.len);
    const payloadEnd = type === REC.DUMP_DATA ? payloadStart + len : off + size;
    const payload = this.#bytes.subarray(payloadStart, payloadEnd);
    return {
      type,
      flags: v.getUint16(off + F.flags, true),
      tid: v.getUint32(off + F.tid, true),
      ts: u64(v, off + F.tsNs),
      device: v.getInt32(off + F.device, true),
      result: v.getInt32(off + F.result, true),
      addr: u64(v, off + F.addr),
      len,
      id: u64(v, off + F.id),
      aux: v.getUint32(off + F.aux, true),
      name: nameLen
        ? decoder.decode(this.#bytes.subarray(nameStart, nameStart + nameLen))
        : "",
      payload,
      payloadView: new DataView(
        payload.buffer,
        payload.byteOffset,
        payload.byteLength,
      ),
    };
  }
}
