/**
 * The leaks found so far, over every pass: counted and summed per device,
 * and the first `maxLeaks` of them (by device order, ID, file order) kept as
 * rows. Leaked rows are copied out of each pass's rows so that only one
 * pass's rows are alive at a time.
 *
 * @module
 */
import { LeakRows, MALLOC, replayWindows, type Window } from "./_leak_rows.ts";

/** Leaks collected from the rows of one or more passes. */
export class FoundLeaks {
  /** Leaks per device index. */
  counts: Float64Array;
  /** Leaked bytes per device index. */
  bytes: Float64Array;
  #rows = FoundLeaks.#none();
  /** Rows kept so far of each device index (some may be cut later). */
  #kept: Float64Array;
  #rank: Int32Array;
  #maxLeaks: number;
  /**
   * Exact totals of the devices whose leaked bytes passed 2^53: past it a
   * float sum depends on the order of its terms, and the passes in parts
   * meet a device's leaks part by part, not in ID order.
   */
  #exact = new Map<number, bigint>();

  /** `rank`: each device index's place in the output order. */
  constructor(rank: Int32Array, maxLeaks: number) {
    this.#rank = rank;
    this.#maxLeaks = maxLeaks;
    this.counts = new Float64Array(rank.length);
    this.bytes = new Float64Array(rank.length);
    this.#kept = new Float64Array(rank.length);
  }

  /** No leak yet: the texts of none need reading. */
  static #none(): LeakRows {
    const rows = new LeakRows(Infinity);
    rows.textsFromValues = true;
    return rows;
  }

  /** Forgets everything found (a pass is started over in more parts). */
  reset(): void {
    this.#rows = FoundLeaks.#none();
    this.#kept.fill(0);
    this.counts.fill(0);
    this.bytes.fill(0);
    this.#exact.clear();
  }

  /** Replays each device's window over `rows` and keeps what leaked. */
  async collect(rows: LeakRows, windows: Map<number, Window>): Promise<void> {
    const leaked = await replayWindows(rows, windows);
    [...windows.keys()].forEach((k, j) => this.#keep(rows, k, leaked[j]));
    this.#rows.textsFromValues &&= rows.textsFromValues;
  }

  /**
   * Keeps device `k`'s leaked rows, `leaked` (indices into `rows`, in ID
   * order): all counted and summed, only as many copied as may be among
   * the first `maxLeaks` listed. Rows of devices listed before `k` already
   * kept come before each of them, and so does each of its rows before it:
   * a log with a million leaks spent 300 ms copying them, one of 64
   * devices holding 10,000 leaks each 200 ms copying and sorting 640,000.
   */
  #keep(rows: LeakRows, k: number, leaked: Uint32Array): void {
    // Exact while the total stays at most 2^53 (sizes are whole numbers),
    // and summed exactly past it, so every order gives one total.
    const size = rows.size;
    let bytes = this.bytes[k];
    for (let j = 0; j < leaked.length; j++) bytes += size[leaked[j]];
    this.counts[k] += leaked.length;
    if (bytes > Number.MAX_SAFE_INTEGER && Number.isFinite(bytes)) {
      let more = 0n;
      for (let j = 0; j < leaked.length; j++) more += BigInt(size[leaked[j]]);
      this.#addExactly(k, more);
    } else {
      this.bytes[k] = bytes;
    }
    const listed = leaked.subarray(0, this.#maxLeaks - this.#keptBefore(k));
    this.#kept[k] += listed.length;
    // Grown once, not doubled from 1024 rows copy by copy.
    this.#rows.reserve(listed.length);
    for (const i of listed) {
      this.#rows.push(
        MALLOC,
        k,
        rows.id[i],
        rows.ptr[i],
        rows.size[i],
        rows.offset[i],
        rows.line[i],
      );
      // Past 4 x maxLeaks, only the first maxLeaks are worth keeping.
      if (this.#rows.length >= 4 * this.#maxLeaks + 1024) {
        this.#rows = this.#first();
      }
    }
  }

  /**
   * How many rows kept are of devices listed before device `k`, at most
   * `maxLeaks`. Rows #first() cut still count: it cuts a row only behind
   * `maxLeaks` others, which come before device `k`'s rows too.
   */
  #keptBefore(k: number): number {
    let n = 0;
    for (let j = 0; j < this.#kept.length; j++) {
      if (this.#rank[j] < this.#rank[k]) n += this.#kept[j];
    }
    return Math.min(n, this.#maxLeaks);
  }

  /**
   * Counts `count` more leaks of device `k`, `bytes` in all, that need no
   * listing: a replay found at least `maxLeaks` listed before each.
   */
  count(k: number, count: number, bytes: bigint): void {
    if (!count) return;
    this.counts[k] += count;
    if (Number.isFinite(this.bytes[k])) this.#addExactly(k, bytes);
  }

  /**
   * `more` bytes added to device `k`'s total exactly (kept as a bigint
   * once past 2^53), the total as a number rounded once, to the nearest.
   */
  #addExactly(k: number, more: bigint): void {
    const exact = (this.#exact.get(k) ?? BigInt(this.bytes[k])) + more;
    if (exact > BigInt(Number.MAX_SAFE_INTEGER)) this.#exact.set(k, exact);
    this.bytes[k] = Number(exact);
  }

  /** The listed leaks, in output order. */
  listed(): LeakRows {
    return this.#rows = this.#first();
  }

  #first(): LeakRows {
    const l = this.#rows, rank = this.#rank;
    const before = (i: number, j: number) =>
      rank[l.device[i]] - rank[l.device[j]] || l.id[i] - l.id[j] ||
      l.offset[i] - l.offset[j];
    // The replays give each device's leaks in ID order, the devices in
    // output order: nearly always there is nothing to sort or cut.
    let sorted = true;
    for (let i = 1; i < l.length && sorted; i++) sorted = before(i - 1, i) <= 0;
    if (sorted && l.length <= this.#maxLeaks) return l;
    const order = Array.from({ length: l.length }, (_, i) => i);
    if (!sorted) order.sort(before);
    const out = new LeakRows(Infinity);
    out.textsFromValues = l.textsFromValues;
    for (const i of order.slice(0, this.#maxLeaks)) {
      out.push(
        MALLOC,
        l.device[i],
        l.id[i],
        l.ptr[i],
        l.size[i],
        l.offset[i],
        l.line[i],
      );
    }
    return out;
  }
}
