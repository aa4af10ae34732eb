import assert from "node:assert/strict";
import {
  type CompareLevel,
  compareSteps,
  readStep,
  stepFromBytes,
  writeCompareCsv,
} from "../../../analysis/compare/mod.ts";
import { removePartsInProgress } from "../../../analysis/files.ts";

const FIXTURES =
  new URL("../../../../shared/fixtures/msmemscope/", import.meta.url).pathname;
const BASELINE = `${FIXTURES}compare_baseline.csv`;
const LEAKS = `${FIXTURES}compare_leaks.csv`;
const RANK_A = `${FIXTURES}memscope_dump_two_ranks_a.csv`;
const RANK_B = `${FIXTURES}memscope_dump_two_ranks_b.csv`;

const HEADER =
  "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)";

/** An event log from data lines, for the small cases. */
function log(lines: string[], levels: CompareLevel[] = ["op"], label = "x") {
  return stepFromBytes(
    new TextEncoder().encode([HEADER, ...lines].join("\n") + "\n"),
    { label, levels },
  );
}

const op = (id: number, name: string, device = 0) =>
  `${id},OP_LAUNCH,ATEN_END,${name},${id}000,1,1,${device},N/A,,,`;
const pta = (id: number, size: number, event = "MALLOC", device = 0) =>
  `${id},${event},PTA,N/A,${id}000,1,1,${device},0x10,"{allocation_id:${id},addr:0x10,size:${size},total:0,used:0}",,`;
const kernel = (id: number, name: string, device = 0) =>
  `${id},KERNEL_LAUNCH,KERNEL_LAUNCH,${name},${id}000,1,1,${device},N/A,"{streamId:0,taskId:${id}}",,`;

function tempDir(): string {
  return Deno.makeTempDirSync({ prefix: "stompwatch_compare_" });
}

Deno.test("compare finds the ops that leak in compare_leaks.csv with their extra memory", async () => {
  const rows = compareSteps(
    await readStep(BASELINE, ["op"]),
    await readStep(LEAKS, ["op"]),
  );
  assert.equal(rows.length, 44);
  const changed = rows.filter((r) => r.diff !== 0).map((
    r,
  ) => [r.name.replace("torch._ops.", ""), r.base, r.compare, r.diff]);
  // Each step of the leaking run adds randn and _to_copy; _to_copy's 4000256
  // bytes are never freed. An op's memory is the first PTA row after its end,
  // so the new allocation shows on the ops just before it.
  assert.deepEqual(changed, [
    ["aten._foreach_add_.List", 1536, 4000256, 3998720],
    ["profiler._record_function_exit._RecordFunction", 1536, 4000256, 3998720],
    ["aten.randn.default", null, 4000256, 4000256],
    ["aten._to_copy.default", null, 1536, 1536],
    ["aten._foreach_add_.List", 0, 4000256, 4000256],
    ["profiler._record_function_exit._RecordFunction", 0, 4000256, 4000256],
    ["aten.randn.default", null, 4000256, 4000256],
  ]);
  // The last _to_copy has no PTA row after it: N/A against 0, diff 0.
  assert.deepEqual(rows.at(-1), {
    event: "OP_LAUNCH",
    name: "torch._ops.aten._to_copy.default",
    device: 0,
    base: null,
    compare: 0,
    diff: 0,
  });
  assert.ok(changed.every(([, , , diff]) => (diff as number) > 0));
});

Deno.test("compare gives diff 0 to every op the two steps share unchanged", async () => {
  const rows = compareSteps(
    await readStep(BASELINE, ["op"]),
    await readStep(LEAKS, ["op"]),
  );
  const shared = rows.filter((r) => r.base !== null && r.compare !== null);
  assert.equal(shared.length, 40);
  // 4 of the 40 sit just before the new ops and carry their allocation.
  const same = shared.filter((r) => r.diff === 0);
  assert.equal(same.length, 36);
  for (const r of same) assert.equal(r.base, r.compare);
  assert.ok(rows.every((r) => r.event === "OP_LAUNCH" && r.device === 0));
});

Deno.test("compare writes the two header lines of msMemScope's memory_compare CSV, then one line per op", async () => {
  const dir = tempDir();
  const rows = compareSteps(
    await readStep(BASELINE, ["op"]),
    await readStep(LEAKS, ["op"]),
  );
  const path = await writeCompareCsv(dir, rows, {
    at: new Date(2026, 10, 20, 23, 17, 33),
  });
  assert.equal(path, `${dir}/compare/memory_compare_20261120231733.csv`);
  const lines = Deno.readTextFileSync(path).split("\n");
  assert.equal(lines[0], ",,,Base,Compare");
  assert.equal(
    lines[1],
    "Event,Name,Device Id,Allocated Memory(byte),Allocated Memory(byte),Diff Memory(byte)",
  );
  assert.equal(lines[2], "OP_LAUNCH,torch._ops.aten.t.default,0,1536,1536,0");
  assert.equal(lines.length, 2 + 44 + 1);
  assert.equal(lines.at(-1), "");
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("compare writes N/A on the side an op is missing from, counting it as 0 in the diff", async () => {
  const dir = tempDir();
  const base = log([op(1, "mm"), pta(2, 512), op(3, "sum"), pta(4, 64)]);
  const next = log([op(1, "mm"), pta(2, 512), op(3, "randn"), pta(4, 128)]);
  const path = await writeCompareCsv(
    dir,
    compareSteps(base, next),
    { at: new Date(2026, 0, 1, 0, 0, 0) },
  );
  assert.deepEqual(Deno.readTextFileSync(path).split("\n").slice(2), [
    "OP_LAUNCH,mm,0,512,512,0",
    "OP_LAUNCH,sum,0,64,N/A,-64",
    "OP_LAUNCH,randn,0,N/A,128,128",
    "",
  ]);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("compare makes the output directories 0700 and the CSV 0600, leaving no part file", async () => {
  const dir = `${tempDir()}/new/out`;
  const path = await writeCompareCsv(dir, [], {
    at: new Date(2026, 0, 1, 0, 0, 0),
  });
  assert.equal(Deno.statSync(dir).mode! & 0o777, 0o700);
  assert.equal(Deno.statSync(`${dir}/compare`).mode! & 0o777, 0o700);
  assert.equal(Deno.statSync(path).mode! & 0o777, 0o600);
  assert.deepEqual([...Deno.readDirSync(`${dir}/compare`)].map((e) => e.name), [
    "memory_compare_20260101000000.csv",
  ]);
  Deno.removeSync(dir.replace(/\/new\/out$/, ""), { recursive: true });
});

Deno.test("compare quotes names that hold commas or quotes", async () => {
  const dir = tempDir();
  const name = '"custom, op"';
  const base = log([`1,OP_LAUNCH,ATB_END,"""custom, op""",1,1,1,0,N/A,,,`]);
  const rows = compareSteps(base, base);
  assert.equal(rows[0].name, name);
  const path = await writeCompareCsv(dir, rows, {
    at: new Date(2026, 0, 1, 0, 0, 0),
  });
  assert.equal(
    Deno.readTextFileSync(path).split("\n")[2],
    'OP_LAUNCH,"""custom, op""",0,0,0,0',
  );
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("compare takes an op's memory from the first PTA row after it in time, MALLOC or FREE, skipping other pools", () => {
  const step = log([
    // File order is not time order: the MALLOC at t=2000 is written last.
    op(1, "a"),
    op(3, "b"),
    `4,MALLOC,HAL,N/A,3500,1,1,0,0x20,"{allocation_id:9,addr:0x20,size:999}",,`,
    pta(5, 256, "FREE"),
    op(6, "c"),
    pta(2, 1024),
  ]);
  const rows = compareSteps(step, step);
  assert.deepEqual(rows.map((r) => [r.name, r.base]), [
    ["a", 1024],
    ["b", 256],
    ["c", 0],
  ]);
});

Deno.test("compare aligns each device on its own and ignores rows without a device number", () => {
  const base = log([op(1, "mm", 0), pta(2, 8, "MALLOC", 0), op(3, "mm", 1)]);
  const next = log([
    op(1, "mm", 1),
    pta(2, 16, "MALLOC", 1),
    `3,OP_LAUNCH,ATEN_END,mm,3000,1,1,N/A,N/A,,,`,
  ]);
  const rows = compareSteps(base, next);
  assert.deepEqual(rows.map((r) => [r.device, r.base, r.compare]), [
    [0, 8, null],
    [1, 0, 16],
  ]);
});

Deno.test("compare at kernel level aligns KERNEL_LAUNCH rows and leaves op rows out", () => {
  const base = log(
    [
      kernel(1, "MatMul"),
      pta(2, 512),
      op(3, "mm"),
      kernel(4, "Add"),
      pta(5, 64),
    ],
    ["kernel"],
  );
  const next = log(
    [
      kernel(1, "MatMul"),
      pta(2, 512),
      kernel(3, "Cast"),
      pta(4, 2048),
      kernel(
        5,
        "Add",
      ),
      pta(6, 64),
    ],
    ["kernel"],
  );
  const rows = compareSteps(base, next);
  assert.deepEqual(
    rows.map((r) => [r.event, r.name, r.base, r.compare, r.diff]),
    [
      ["KERNEL_LAUNCH", "MatMul", 512, 512, 0],
      ["KERNEL_LAUNCH", "Cast", null, 2048, 2048],
      ["KERNEL_LAUNCH", "Add", 64, 64, 0],
    ],
  );
});

Deno.test("compare at kernel level reads the two-rank fixture's KERNEL_LAUNCH rows on both devices", async () => {
  const rows = compareSteps(
    await readStep(RANK_A, ["kernel"]),
    await readStep(RANK_B, ["kernel"]),
  );
  assert.deepEqual(rows.map((r) => r.device), [
    0,
    0,
    0,
    0,
    0,
    0,
    1,
    1,
    1,
    1,
    1,
    1,
  ]);
  assert.ok(rows.every((r) => r.event === "KERNEL_LAUNCH"));
  // Rank a launched one more kernel per device than rank b.
  assert.equal(rows.filter((r) => r.compare === null).length, 2);
});

Deno.test("compare at op,kernel level aligns both kinds in one sequence", () => {
  const step = log([op(1, "mm"), kernel(2, "MatMul"), pta(3, 4)], [
    "op",
    "kernel",
  ]);
  const rows = compareSteps(step, step);
  assert.deepEqual(rows.map((r) => [r.event, r.name]), [
    ["OP_LAUNCH", "mm"],
    ["KERNEL_LAUNCH", "MatMul"],
  ]);
});

Deno.test("compare writes msMemScope's one-sided rows when one log has no rows of the level", () => {
  const ops = log([op(1, "mm"), pta(2, 512)], ["kernel"], "ops.csv");
  const kernels = log(
    [kernel(1, "MatMul"), pta(2, 512), kernel(3, "Add", 1)],
    ["kernel"],
    "kernels.csv",
  );
  const k = { event: "KERNEL_LAUNCH" };
  assert.deepEqual(compareSteps(ops, kernels), [
    { ...k, name: "MatMul", device: 0, base: null, compare: 512, diff: 512 },
    { ...k, name: "Add", device: 1, base: null, compare: 0, diff: 0 },
  ]);
  assert.deepEqual(compareSteps(kernels, ops), [
    { ...k, name: "MatMul", device: 0, base: 512, compare: null, diff: -512 },
    { ...k, name: "Add", device: 1, base: 0, compare: null, diff: 0 },
  ]);
  // At op level, the log of kernels is the one without rows.
  const opsAtOp = log([op(1, "mm"), pta(2, 512)], ["op"], "ops.csv");
  const kernelsAtOp = log([kernel(1, "MatMul")], ["op"], "kernels.csv");
  assert.deepEqual(compareSteps(kernelsAtOp, opsAtOp), [
    {
      event: "OP_LAUNCH",
      name: "mm",
      device: 0,
      base: null,
      compare: 512,
      diff: 512,
    },
  ]);
});

Deno.test("compare refuses two logs without rows of the level, naming both and suggesting the other level", () => {
  const ops = log([op(1, "mm")], ["kernel"], "ops.csv");
  assert.throws(
    () => compareSteps(ops, ops),
    /^CompareError: No kernel-level rows in ops\.csv or ops\.csv: neither has KERNEL_LAUNCH events on any device; try --level op$/,
  );
});

Deno.test("compare refuses a log with no rows on any device, as msMemScope fails on it", () => {
  const empty = log([`1,SYSTEM,PROC_START,job,1000,1,1,N/A,N/A,,,`], [
    "kernel",
  ], "empty.csv");
  const kernels = log([kernel(1, "MatMul")], ["kernel"], "kernels.csv");
  assert.throws(
    () => compareSteps(empty, kernels),
    /^CompareError: Cannot compare empty\.csv: it has no rows on any device; /,
  );
});

Deno.test("compare refuses logs of different frameworks", () => {
  const a = log([op(1, "mm"), pta(2, 1)], ["kernel", "op"], "a.csv");
  const b = log(
    [op(1, "mm"), `2,MALLOC,MINDSPORE,N/A,2000,1,1,0,0x10,"{size:1}",,`],
    ["kernel", "op"],
    "b.csv",
  );
  assert.throws(
    () => compareSteps(a, b),
    /Cannot compare a\.csv \(PTA\) with b\.csv \(MINDSPORE\)/,
  );
  assert.throws(
    () => compareSteps(b, b),
    /MindSpore logs at op level.*use --level kernel$/,
  );
});

Deno.test("a second compare in the same second takes the next second's name and leaves the first one's file whole", async () => {
  const dir = tempDir();
  const at = new Date(2026, 0, 1, 0, 0, 0);
  const step = log([op(1, "mm"), pta(2, 512)]);
  const rows = compareSteps(step, step);
  const first = await writeCompareCsv(dir, rows, { at });
  const firstText = Deno.readTextFileSync(first);
  const second = await writeCompareCsv(dir, [], { at });
  assert.equal(first, `${dir}/compare/memory_compare_20260101000000.csv`);
  assert.equal(second, `${dir}/compare/memory_compare_20260101000001.csv`);
  assert.equal(Deno.readTextFileSync(first), firstText);
  assert.deepEqual(
    [...Deno.readDirSync(`${dir}/compare`)].map((e) => e.name).sort(),
    ["memory_compare_20260101000000.csv", "memory_compare_20260101000001.csv"],
  );
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("compare's part file is known to the process while it is written, so that a signal's handler removes it and nothing is published", async () => {
  const dir = tempDir();
  const at = new Date(2026, 0, 1, 0, 0, 0);
  const parts = () =>
    [...Deno.readDirSync(`${dir}/compare`)].map((e) => e.name);
  let during: string[] = [];
  function* lines() {
    yield new TextEncoder().encode("OP_LAUNCH,mm,0,512,512,0\n");
    during = parts();
    // What Ctrl-C's handler does (cli/_signals.ts) before it exits.
    removePartsInProgress();
    yield new TextEncoder().encode("OP_LAUNCH,sum,0,64,64,0\n");
  }
  await assert.rejects(() => writeCompareCsv(dir, lines(), { at }));
  assert.deepEqual(during, [`.memory_compare.${Deno.pid}.part`]);
  assert.deepEqual(parts(), []);
  Deno.removeSync(dir, { recursive: true });
});
