/**
 * Interns the names that ring records carry. Op types above all: a job
 * launches the same few dozen ops millions of times, and decoding or hashing
 * each name as a string again would cost the pump more than the rest of the
 * record. A name is hashed and compared a 32-bit word at a time straight
 * from the ring, and is known by a small integer id from then on.
 *
 * @module
 */

const decoder = new TextDecoder();

/** The names of one ring, each known by an id from 0. */
export class NameTable {
  /** Names kept at most; after that, new names get no id (-1). */
  static readonly MAX = 1 << 16;
  /** The text of each id. */
  readonly texts: string[] = [];
  /** Each name's bytes as words, the last one masked to the name's length. */
  #words: Uint32Array[] = [];
  #lengths: number[] = [];
  #hashes: number[] = [];
  #byText = new Map<string, number>();
  /** Open addressing: id + 1 per slot, 0 for empty; at most half full, and
   * grown as names come so that it stays in the CPU's nearest cache. */
  #slots = new Int32Array(256);
  #mask = 255;

  /**
   * The id of the `length` bytes at byte `start` of the memory under
   * `words` (`start` a multiple of 4), or -1 when the name is new and the
   * table is full.
   */
  intern(words: Uint32Array, start: number, length: number): number {
    const first = start >>> 2, whole = length >>> 2, rest = length & 3;
    const last = rest ? words[first + whole] & ((1 << (8 * rest)) - 1) : 0;
    let h = Math.imul(length ^ 0x811c9dc5, 0x01000193);
    for (let i = 0; i < whole; i++) {
      h = Math.imul(h ^ words[first + i], 0x01000193);
    }
    h = Math.imul(h ^ last, 0x01000193);
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h ^= h >>> 13;
    const slots = this.#slots, mask = this.#mask;
    for (let slot = h & mask;; slot = (slot + 1) & mask) {
      const id = slots[slot] - 1;
      if (id < 0) return this.#add(slot, h, words, first, length, last);
      if (this.#lengths[id] !== length) continue;
      const known = this.#words[id];
      let same = !rest || known[whole] === last;
      for (let i = 0; i < whole && same; i++) {
        same = known[i] === words[first + i];
      }
      if (same) return id;
    }
  }

  /** The id of a name already seen, by its text. */
  idOf(text: string): number | undefined {
    return this.#byText.get(text);
  }

  #add(
    slot: number,
    hash: number,
    words: Uint32Array,
    first: number,
    length: number,
    last: number,
  ): number {
    const id = this.texts.length;
    if (id >= NameTable.MAX) return -1;
    const whole = length >>> 2;
    const known = new Uint32Array(whole + (length & 3 ? 1 : 0));
    known.set(words.subarray(first, first + whole));
    if (length & 3) known[whole] = last;
    const bytes = new Uint8Array(words.buffer, words.byteOffset + 4 * first);
    const text = decoder.decode(bytes.subarray(0, length));
    this.texts.push(text);
    this.#words.push(known);
    this.#lengths.push(length);
    if (!this.#byText.has(text)) this.#byText.set(text, id);
    this.#hashes.push(hash);
    this.#slots[slot] = id + 1;
    if (2 * this.texts.length > this.#slots.length) this.#grow();
    return id;
  }

  #grow(): void {
    const slots = new Int32Array(2 * this.#slots.length);
    const mask = slots.length - 1;
    this.#hashes.forEach((h, id) => {
      let slot = h & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = id + 1;
    });
    this.#slots = slots;
    this.#mask = mask;
  }
}
