/**
 * Streaming writers of a snapshot as pickle protocol 4 or JSON, the two forms
 * pytorch.org/memory_viz loads (PYTORCH.md section 4). Values are written as
 * they come, so a snapshot of millions of trace entries never sits in memory.
 *
 * The pickle uses only opcodes the viewer's own unpickler knows (PROTO 4,
 * EMPTY_DICT/LIST, MARK, SETITEMS, APPENDS in batches of at most 1000 as
 * Python's pickler does, since the viewer spreads a batch into one call,
 * BININT1/2, BININT, LONG1 of at most 8 bytes, SHORT_BINUNICODE/BINUNICODE,
 * NONE, NEWTRUE/NEWFALSE, MEMOIZE, BINGET/LONG_BINGET): no BINUNICODE8, no
 * LONG4, no GLOBAL or REDUCE, so nothing but dict/list/str/int/bool/None.
 *
 * @module
 */

/** One stack frame, as the viewer shows it. */
export interface Frame {
  filename: string;
  line: number;
  name: string;
}

/** A trace entry's action, as an index into {@link ACTIONS}. */
export const enum Action {
  Alloc = 0,
  FreeRequested = 1,
  FreeCompleted = 2,
  SegmentAlloc = 3,
  SegmentFree = 4,
  Oom = 5,
}

/** The viewer's name of each {@link Action}. */
export const ACTIONS: readonly string[] = [
  "alloc",
  "free_requested",
  "free_completed",
  "segment_alloc",
  "segment_free",
  "oom",
];

/** A trace entry as {@link SnapshotWriter.entry} writes it. */
export interface TraceEntry {
  action: Action;
  /** The address, or for an `oom` the device's free bytes. */
  addr: number;
  size: number;
  timeUs: number;
  stack: number;
  frames: readonly Frame[];
}

/** Writes an entry field by field, for any writer. */
function entryByFields(w: SnapshotWriter, e: TraceEntry): void {
  w.dictStart();
  w.key("action");
  w.str(ACTIONS[e.action]);
  w.key(e.action === Action.Oom ? "device_free" : "addr");
  w.int(e.addr);
  w.key("size");
  w.int(e.size);
  w.key("stream");
  w.int(0);
  w.key("time_us");
  w.int(e.timeUs);
  w.key("frames");
  w.frames(e.stack, e.frames);
  w.dictEnd();
}

/** Where written bytes go; called with a view that is reused afterwards. */
export type ByteSink = (bytes: Uint8Array) => void;

/** The calls a snapshot is written with, the same for both forms. */
export interface SnapshotWriter {
  dictStart(): void;
  /** A key of the open dict; its value is the next value written. */
  key(k: string): void;
  dictEnd(): void;
  listStart(): void;
  listEnd(): void;
  int(n: number | bigint): void;
  str(s: string): void;
  none(): void;
  /** A frames list; a list written before under the same `id` is referred to. */
  frames(id: number, frames: readonly Frame[]): void;
  /**
   * One trace entry, `{action, addr (oom: device_free), size, stream: 0,
   * time_us, frames}`: the same as writing it field by field, faster.
   */
  entry(e: TraceEntry): void;
  /** Ends the document and flushes everything to the sink. */
  finish(): void;
}

const enc = new TextEncoder();
const BATCH = 1000;

/** A 1 MiB buffer in front of a sink. */
class Out {
  #buf = new Uint8Array(1 << 20);
  #view = new DataView(this.#buf.buffer);
  #n = 0;
  constructor(readonly sink: ByteSink) {}

  room(n: number): void {
    if (this.#n + n > this.#buf.length) this.flush();
    if (n > this.#buf.length) {
      this.#buf = new Uint8Array(n);
      this.#view = new DataView(this.#buf.buffer);
    }
  }
  byte(b: number): void {
    if (this.#n >= this.#buf.length) this.flush();
    this.#buf[this.#n++] = b;
  }
  u16(v: number): void {
    this.room(2);
    this.#view.setUint16(this.#n, v, true);
    this.#n += 2;
  }
  i32(v: number): void {
    this.room(4);
    this.#view.setInt32(this.#n, v, true);
    this.#n += 4;
  }
  u32(v: number): void {
    this.room(4);
    this.#view.setUint32(this.#n, v, true);
    this.#n += 4;
  }
  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.#buf.set(b, this.#n);
    this.#n += b.length;
  }
  /** ASCII text, straight into the buffer. */
  ascii(s: string): void {
    this.room(s.length);
    for (let i = 0; i < s.length; i++) this.#buf[this.#n++] = s.charCodeAt(i);
  }
  flush(): void {
    if (this.#n) this.sink(this.#buf.subarray(0, this.#n));
    this.#n = 0;
  }
  /** The buffer with room for `n` bytes at {@link at}; advance with {@link moveTo}. */
  raw(n: number): Uint8Array {
    this.room(n);
    return this.#buf;
  }
  get at(): number {
    return this.#n;
  }
  moveTo(n: number): void {
    this.#n = n;
  }
}

/**
 * Writes a non-negative integer below 2^53, or any 32-bit one, as the
 * shortest pickle opcode Python would use; returns the new offset.
 */
function putInt(b: Uint8Array, at: number, n: number): number {
  if (n >= 0 && n < 256) {
    b[at] = 0x4b; // BININT1
    b[at + 1] = n;
    return at + 2;
  }
  if (n >= 0 && n < 65536) {
    b[at] = 0x4d; // BININT2
    b[at + 1] = n & 0xff;
    b[at + 2] = n >>> 8;
    return at + 3;
  }
  if (n >= -0x80000000 && n <= 0x7fffffff) {
    b[at] = 0x4a; // BININT
    b[at + 1] = n & 0xff;
    b[at + 2] = (n >>> 8) & 0xff;
    b[at + 3] = (n >>> 16) & 0xff;
    b[at + 4] = (n >>> 24) & 0xff;
    return at + 5;
  }
  // LONG1: little-endian two's complement, as short as Python makes it
  // (n >= 2^31 here, so at least 5 bytes); 32-bit halves, no division loop.
  const lo = n >>> 0;
  const hi = (n - lo) / 4294967296;
  const len = 4 + (hi < 0x80 ? 1 : hi < 0x8000 ? 2 : hi < 0x800000 ? 3 : 4);
  b[at] = 0x8a;
  b[at + 1] = len;
  b[at + 2] = lo & 0xff;
  b[at + 3] = (lo >>> 8) & 0xff;
  b[at + 4] = (lo >>> 16) & 0xff;
  b[at + 5] = lo >>> 24;
  for (let k = 0; k < len - 4; k++) b[at + 6 + k] = (hi >>> (8 * k)) & 0xff;
  return at + 2 + len;
}

/** The bytes of `n` as Python's LONG1 writes them: shortest two's complement. */
function longBytes(n: bigint): number[] {
  const out: number[] = [];
  let v = n;
  for (;;) {
    const b = Number(v & 0xffn);
    out.push(b);
    v >>= 8n;
    if ((v === 0n && b < 0x80) || (v === -1n && b >= 0x80)) return out;
  }
}

/**
 * Pickle protocol 4, streaming. Repeated strings (keys, actions, states)
 * and frames lists are written once and memoized.
 *
 * @example
 * ```ts
 * import { PickleWriter } from "./emit.ts";
 * const parts: Uint8Array[] = [];
 * const w = new PickleWriter((b) => parts.push(b.slice()));
 * w.dictStart(); w.key("segments"); w.listStart(); w.listEnd(); w.dictEnd();
 * w.finish();
 * ```
 */
export class PickleWriter implements SnapshotWriter {
  #out: Out;
  #memo = 0;
  #strings = new Map<string, number>();
  /** Memo index of each frames list written, by its id (ids are dense). */
  #framesMemo: number[] = [];
  #entryMemos: Array<number[] | undefined> = [];
  /** Per open container: items so far (lists) or -1 (dicts). */
  #open: number[] = [];

  constructor(sink: ByteSink) {
    this.#out = new Out(sink);
    this.#out.byte(0x80);
    this.#out.byte(4);
  }

  #before(): void {
    const top = this.#open.length - 1;
    if (top < 0 || this.#open[top] < 0) return;
    if (this.#open[top] % BATCH === 0) this.#out.byte(0x28); // MARK
  }
  #after(): void {
    const top = this.#open.length - 1;
    if (top < 0 || this.#open[top] < 0) return;
    if (++this.#open[top] % BATCH === 0) this.#out.byte(0x65); // APPENDS
  }
  #memoize(): number {
    this.#out.byte(0x94);
    return this.#memo++;
  }
  #get(i: number): void {
    if (i < 256) {
      this.#out.byte(0x68); // BINGET
      this.#out.byte(i);
    } else {
      this.#out.byte(0x6a); // LONG_BINGET
      this.#out.u32(i);
    }
  }

  dictStart(): void {
    this.#before();
    this.#out.byte(0x7d); // EMPTY_DICT
    this.#out.byte(0x28); // MARK
    this.#open.push(-1);
  }
  key(k: string): void {
    this.#text(k, true);
  }
  dictEnd(): void {
    this.#open.pop();
    this.#out.byte(0x75); // SETITEMS
    this.#after();
  }
  listStart(): void {
    this.#before();
    this.#out.byte(0x5d); // EMPTY_LIST
    this.#open.push(0);
  }
  listEnd(): void {
    const n = this.#open.pop()!;
    if (n % BATCH !== 0) this.#out.byte(0x65);
    this.#after();
  }
  int(n: number | bigint): void {
    this.#before();
    const o = this.#out;
    if (typeof n === "number" && Number.isSafeInteger(n) && n >= -0x80000000) {
      o.moveTo(putInt(o.raw(16), o.at, n));
    } else if (
      typeof n === "number" && Number.isInteger(n) && n >= 0 && n < 256
    ) {
      o.byte(0x4b); // BININT1
      o.byte(n);
    } else if (typeof n === "number" && n >= 0 && n < 65536) {
      o.byte(0x4d); // BININT2
      o.u16(n);
    } else if (
      typeof n === "number" && n >= -0x80000000 && n <= 0x7fffffff
    ) {
      o.byte(0x4a); // BININT
      o.i32(n);
    } else {
      const bytes = longBytes(BigInt(n));
      if (bytes.length > 8) {
        throw new RangeError(`Cannot write ${n}: wider than 8 bytes`);
      }
      o.byte(0x8a); // LONG1
      o.byte(bytes.length);
      for (const b of bytes) o.byte(b);
    }
    this.#after();
  }
  #text(s: string, memo: boolean): void {
    this.#before();
    const seen = memo ? this.#strings.get(s) : undefined;
    if (seen !== undefined) {
      this.#get(seen);
    } else {
      const b = enc.encode(s);
      if (b.length < 256) {
        this.#out.byte(0x8c); // SHORT_BINUNICODE
        this.#out.byte(b.length);
      } else {
        this.#out.byte(0x58); // BINUNICODE
        this.#out.u32(b.length);
      }
      this.#out.bytes(b);
      if (memo) this.#strings.set(s, this.#memoize());
    }
    this.#after();
  }
  /** Short strings repeat (actions, states, file names): memoized. */
  str(s: string): void {
    this.#text(s, s.length <= 64);
  }
  none(): void {
    this.#before();
    this.#out.byte(0x4e);
    this.#after();
  }
  frames(id: number, frames: readonly Frame[]): void {
    const seen = this.#framesMemo[id];
    if (seen !== undefined) {
      this.#before();
      this.#get(seen);
      this.#after();
      return;
    }
    this.listStart();
    // Memoized empty, filled afterwards: the memo holds the same list object.
    this.#framesMemo[id] = this.#memoize();
    for (const f of frames) {
      this.dictStart();
      this.key("filename");
      this.str(f.filename);
      this.key("line");
      this.int(f.line);
      this.key("name");
      this.str(f.name);
      this.dictEnd();
    }
    this.listEnd();
  }
  /**
   * Memo indices of an entry's keys and action, once all were written (the
   * first entry of each action writes them), else undefined.
   */
  #entryMemo(action: Action): number[] | undefined {
    const all = [
      "action",
      ACTIONS[action],
      action === Action.Oom ? "device_free" : "addr",
      "size",
      "stream",
      "time_us",
      "frames",
    ].map((k) => this.#strings.get(k));
    if (all.some((i) => i === undefined || i > 255)) return undefined;
    this.#entryMemos[action] = all as number[];
    return all as number[];
  }
  entry(e: TraceEntry): void {
    const memo = this.#entryMemos[e.action] ?? this.#entryMemo(e.action);
    const frames = this.#framesMemo[e.stack];
    if (memo === undefined || frames === undefined) {
      entryByFields(this, e); // first of its kind: memoizes what it writes
      return;
    }
    this.#before();
    const o = this.#out;
    const b = o.raw(64);
    let at = o.at;
    // EMPTY_DICT, MARK, then BINGET of each memoized key and the action.
    b[at] = 0x7d;
    b[at + 1] = 0x28;
    b[at + 2] = 0x68;
    b[at + 3] = memo[0];
    b[at + 4] = 0x68;
    b[at + 5] = memo[1];
    b[at + 6] = 0x68;
    b[at + 7] = memo[2];
    at = putInt(b, at + 8, e.addr);
    b[at] = 0x68;
    b[at + 1] = memo[3];
    at = putInt(b, at + 2, e.size);
    b[at] = 0x68;
    b[at + 1] = memo[4];
    b[at + 2] = 0x4b; // BININT1 0: the stream
    b[at + 3] = 0;
    b[at + 4] = 0x68;
    b[at + 5] = memo[5];
    at = putInt(b, at + 6, e.timeUs);
    b[at++] = 0x68;
    b[at++] = memo[6];
    if (frames < 256) {
      b[at++] = 0x68; // BINGET
      b[at++] = frames;
    } else {
      b[at++] = 0x6a; // LONG_BINGET
      b[at++] = frames & 0xff;
      b[at++] = (frames >>> 8) & 0xff;
      b[at++] = (frames >>> 16) & 0xff;
      b[at++] = frames >>> 24;
    }
    b[at++] = 0x75; // SETITEMS
    o.moveTo(at);
    this.#after();
  }
  finish(): void {
    this.#out.byte(0x2e); // STOP
    this.#out.flush();
  }
}

/**
 * The same document as JSON (`--format json`), streaming.
 *
 * @example
 * ```ts
 * import { JsonWriter } from "./emit.ts";
 * let text = "";
 * const w = new JsonWriter((b) => text += new TextDecoder().decode(b));
 * w.dictStart(); w.key("segments"); w.listStart(); w.listEnd(); w.dictEnd();
 * w.finish(); // text === '{"segments":[]}'
 * ```
 */
export class JsonWriter implements SnapshotWriter {
  #out: Out;
  /** Per open container: whether a value was written in it. */
  #filled: boolean[] = [];
  #afterKey = false;
  #framesJson = new Map<number, Uint8Array>();

  constructor(sink: ByteSink) {
    this.#out = new Out(sink);
  }

  #before(): void {
    if (this.#afterKey) {
      this.#afterKey = false;
      return;
    }
    const top = this.#filled.length - 1;
    if (top < 0) return;
    if (this.#filled[top]) this.#out.byte(0x2c);
    this.#filled[top] = true;
  }
  dictStart(): void {
    this.#before();
    this.#out.byte(0x7b);
    this.#filled.push(false);
  }
  key(k: string): void {
    this.#before();
    this.#out.bytes(enc.encode(JSON.stringify(k)));
    this.#out.byte(0x3a);
    this.#afterKey = true;
  }
  dictEnd(): void {
    this.#filled.pop();
    this.#out.byte(0x7d);
  }
  listStart(): void {
    this.#before();
    this.#out.byte(0x5b);
    this.#filled.push(false);
  }
  listEnd(): void {
    this.#filled.pop();
    this.#out.byte(0x5d);
  }
  int(n: number | bigint): void {
    this.#before();
    this.#out.ascii(String(n));
  }
  str(s: string): void {
    this.#before();
    this.#out.bytes(enc.encode(JSON.stringify(s)));
  }
  none(): void {
    this.#before();
    this.#out.ascii("null");
  }
  frames(id: number, frames: readonly Frame[]): void {
    let json = this.#framesJson.get(id);
    if (json === undefined) {
      json = enc.encode(JSON.stringify(frames));
      this.#framesJson.set(id, json);
    }
    this.#before();
    this.#out.bytes(json);
  }
  entry(e: TraceEntry): void {
    entryByFields(this, e);
  }
  finish(): void {
    this.#out.flush();
  }
}
