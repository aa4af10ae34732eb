/**
 * The verdict on one watched block: fed its before/after samples in order, it
 * finds every change, says which op made it (or that it happened between two
 * ops), and whether that op was allowed to write the block. Pure: no I/O.
 *
 * Only consecutive samples that were both taken are compared (a before with
 * the after of the same op call; an after with the next before), so samples
 * that are missing because dump_nums ran out never read as changes.
 *
 * @module
 */

import type { Change, FirstChange } from "./types.ts";

/** One before or after sample of the watched block around one op call. */
export interface Sample {
  phase: "before" | "after";
  op: string;
  callCount: number;
  checksum: bigint;
  /** The `.bin` name (or checksum row) the sample was written as. */
  file: string;
  /** The op had an output buffer overlapping the watched block. */
  allowed: boolean;
  /**
   * Checksum of the block's bytes outside every extent the op may write
   * (framework ops on host blocks): a change there is never allowed.
   */
  outside?: bigint;
}

/** Options of {@linkcode WatchVerdict}. */
export interface WatchVerdictOptions {
  /** Changes kept in `changes`; later ones are only counted. Default 10,000. */
  maxChanges?: number;
}

/**
 * Incremental verdict for one watch.
 *
 * @example
 * ```ts
 * import { WatchVerdict } from "./verdict.ts";
 * const v = new WatchVerdict();
 * v.add({ phase: "before", op: "Copy", callCount: 1, checksum: 1n, file: "b", allowed: false });
 * v.add({ phase: "after", op: "Copy", callCount: 1, checksum: 2n, file: "a", allowed: false });
 * v.stomp; // true
 * ```
 */
export class WatchVerdict {
  #last: Sample | undefined;
  #changes: Change[] = [];
  #dropped = 0;
  #firstChange: Change | undefined;
  #firstStomp: Change | undefined;
  #maxChanges: number;

  /** Starts with no samples. */
  constructor(options: WatchVerdictOptions = {}) {
    this.#maxChanges = options.maxChanges ?? 10_000;
  }

  /** Feeds the next sample, in the order the samples were taken. */
  add(sample: Sample): void {
    const last = this.#last;
    this.#last = sample;
    if (last === undefined || last.checksum === sample.checksum) return;
    if (last.phase === "before" && sample.phase === "after") {
      if (last.op !== sample.op || last.callCount !== sample.callCount) return;
      this.#record({
        op: sample.op,
        call_count: sample.callCount,
        before_file: last.file,
        after_file: sample.file,
        ...(sample.allowed && last.outside !== sample.outside
          ? { beyond_writable: true }
          : {}),
        allowed: sample.allowed && last.outside === sample.outside,
      });
    } else if (last.phase === "after" && sample.phase === "before") {
      this.#record({
        op: sample.op,
        call_count: sample.callCount,
        before_file: last.file,
        after_file: sample.file,
        outside_op: true,
        previous_op: last.op,
        previous_call_count: last.callCount,
        allowed: false,
      });
    }
  }

  /**
   * Says that samples were not taken from here on (a CLI window closed, the
   * watch was paused): the next sample is not compared with the last one.
   */
  markGap(): void {
    this.#last = undefined;
  }

  /** All changes seen, in order, up to `maxChanges`. */
  get changes(): Change[] {
    return [...this.#changes];
  }

  /** Changes seen beyond `maxChanges`, counted but not kept. */
  get droppedChanges(): number {
    return this.#dropped;
  }

  /** The first change not allowed, else the first change, else null. */
  get firstChange(): FirstChange | null {
    const change = this.#firstStomp ?? this.#firstChange;
    if (change === undefined) return null;
    const { allowed: _allowed, ...first } = change;
    return first;
  }

  /** True when the first change not allowed exists. */
  get stomp(): boolean {
    return this.#firstStomp !== undefined;
  }

  #record(change: Change): void {
    this.#firstChange ??= change;
    if (!change.allowed) this.#firstStomp ??= change;
    if (this.#changes.length < this.#maxChanges) this.#changes.push(change);
    else this.#dropped++;
  }
}

/**
 * The verdict over a whole list of samples at once.
 *
 * @example
 * ```ts
 * import { verdictOf } from "./verdict.ts";
 * verdictOf([]); // { changes: [], first_change: null, stomp: false }
 * ```
 */
export function verdictOf(
  samples: Iterable<Sample>,
): { changes: Change[]; first_change: FirstChange | null; stomp: boolean } {
  const verdict = new WatchVerdict({ maxChanges: Infinity });
  for (const sample of samples) verdict.add(sample);
  return {
    changes: verdict.changes,
    first_change: verdict.firstChange,
    stomp: verdict.stomp,
  };
}
