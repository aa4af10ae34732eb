/**
 * Writes large msMemScope-format event logs for the benchmarks: two ranks
 * (one process and device each, own ID counters) interleaved, ATen ops with
 * kernel launches, PTA and HAL allocations whose MALLOC rows are written when
 * the block is freed (so IDs are out of order, as in real dumps), HAL
 * addresses reused through a free list, and an mstx mark `step` per step.
 * Every 40th HAL block is never freed: the known leaks.
 *
 * @module
 */
import { formatPtr } from "../analysis/memscope_csv/mod.ts";

/** What was written, to check an analysis against. */
export interface GeneratedLog {
  rows: number;
  bytes: number;
  /** Per device: HAL blocks allocated between mark 0 and mark 1, never freed. */
  leaksInFirstStep: Map<string, number>;
  /** Per device: number of `step` marks. */
  marks: Map<string, number>;
}

const OPS = [
  "torch._ops.aten.addmm.default",
  "torch._ops.aten.mse_loss.default",
  "torch._ops.aten.mm.default",
  "torch._ops.aten.t.default",
  "torch._ops.aten.ones_like.default",
  "torch._ops.aten.mse_loss_backward.default",
];
const KERNELS = ["MatMulV2", "Add", "Mul", "ReduceSum", "Cast", "Transpose"];

class Rank {
  id = 0;
  ts = 1764753083997498270n;
  step = -1;
  allocation = 0;
  used = 0;
  halCount = 0;
  #freeHal: number[] = [];
  #nextHal = 0x124000000000;
  /** Rows waiting for their block's free (ID order differs from file order). */
  held: Array<{ id: number; ptr: number; size: number; pool: string }> = [];
  constructor(readonly pid: number, readonly device: string) {}

  halPtr(): number {
    const p = this.#freeHal.pop();
    if (p !== undefined) return p;
    this.#nextHal += 0x200000;
    return this.#nextHal;
  }
  releaseHal(ptr: number) {
    this.#freeHal.push(ptr);
  }
}

/**
 * Writes about `rows` rows (~146 bytes each) to `path`.
 *
 * @example
 * ```ts
 * import { writeMemscopeLog } from "./_memscope_gen.ts";
 * const log = await writeMemscopeLog("/tmp/big.csv", 1_000_000);
 * console.log(log.bytes);
 * ```
 */
export async function writeMemscopeLog(
  path: string,
  rows: number,
): Promise<GeneratedLog> {
  using file = await Deno.open(path, {
    write: true,
    create: true,
    truncate: true,
  });
  const enc = new TextEncoder();
  let text =
    "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n";
  let written = 0, bytes = 0;
  const flush = async (force: boolean) => {
    if (text.length < 1 << 20 && !force) return;
    const b = enc.encode(text);
    bytes += b.length;
    let off = 0;
    while (off < b.length) off += await file.write(b.subarray(off));
    text = "";
  };
  const ranks = [new Rank(3101864, "0"), new Rank(3101865, "1")];
  const leaks = new Map<string, number>(), marks = new Map<string, number>();
  let seed = 42;
  const rand = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const emit = (r: Rank, event: string, type: string, rest: string) => {
    r.ts += BigInt(1000 + rand(100000));
    text += `${r.id++},${event},${type},${rest.replace("@TS", String(r.ts))}\n`;
    written++;
  };
  const where = (r: Rank) => `${r.pid},${r.pid},${r.device}`;
  const memRow = (
    r: Rank,
    kind: string,
    h: { id: number; ptr: number; size: number; pool: string },
    id: number,
  ) => {
    const p = formatPtr(h.ptr);
    const attr = h.pool === "PTA"
      ? `{allocation_id:${h.id},addr:${p},size:${h.size},total:20971520,used:${r.used}}`
      : `{allocation_id:${h.id},addr:${p},size:${h.size}}`;
    r.ts += 700n;
    text += `${id},${kind},${h.pool},N/A,${r.ts},${
      where(r)
    },${p},"${attr}",,\n`;
    written++;
  };
  const free = (r: Rank, i: number) => {
    const h = r.held[i];
    r.held.splice(i, 1);
    memRow(r, "MALLOC", h, h.id);
    r.used -= h.size;
    memRow(r, "FREE", h, r.id++);
    if (h.pool === "HAL") r.releaseHal(h.ptr);
  };
  const rowsPerStep = 20_000;
  while (written < rows) {
    const r = ranks[rand(2)];
    // A burst of one op on one rank keeps the two ID sequences interleaved.
    if (written / 2 / rowsPerStep > r.step + 1) {
      while (r.held.length) free(r, 0);
      r.step++;
      emit(r, "MSTX", "Mark", `"step",@TS,${where(r)},N/A,,,`);
      marks.set(r.device, (marks.get(r.device) ?? 0) + 1);
    }
    const op = OPS[rand(OPS.length)];
    emit(r, "OP_LAUNCH", "ATEN_START", `${op},@TS,${where(r)},N/A,,,`);
    for (let k = rand(4); k >= 0; k--) {
      const size = 512 * (1 + rand(4096));
      const ptr = 0x12c041400000 + rand(1 << 20) * 512;
      r.used += size;
      r.held.push({ id: r.id++, ptr, size, pool: "PTA" });
    }
    if (rand(8) === 0) {
      const h = {
        id: r.id++,
        ptr: r.halPtr(),
        size: 2097152 * (1 + rand(9)),
        pool: "HAL",
      };
      if (++r.halCount % 40 === 0) {
        // Never freed: write it now and forget it.
        memRow(r, "MALLOC", h, h.id);
        if (r.step === 0) leaks.set(r.device, (leaks.get(r.device) ?? 0) + 1);
      } else r.held.push(h);
    }
    for (let k = rand(3); k >= 0; k--) {
      emit(
        r,
        "KERNEL_LAUNCH",
        "KERNEL_LAUNCH",
        `${KERNELS[rand(KERNELS.length)]},@TS,${
          where(r)
        },N/A,"{streamId:2,taskId:${rand(65536)}}",,`,
      );
    }
    emit(r, "OP_LAUNCH", "ATEN_END", `${op},@TS,${where(r)},N/A,,,`);
    while (r.held.length > 24) free(r, rand(r.held.length));
    await flush(false);
  }
  for (const r of ranks) while (r.held.length) free(r, 0);
  await flush(true);
  return { rows: written, bytes, leaksInFirstStep: leaks, marks };
}
