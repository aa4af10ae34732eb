import assert from "node:assert/strict";
import { type Sample, verdictOf, WatchVerdict } from "../../watch/verdict.ts";

/** A before/after pair of one op call with the given checksums. */
function call(
  op: string,
  callCount: number,
  before: bigint,
  after: bigint,
  allowed = false,
): Sample[] {
  const file = (phase: string) => `0_1_${op}_${callCount}-w_0_${phase}.bin`;
  return [
    {
      phase: "before",
      op,
      callCount,
      checksum: before,
      file: file("before"),
      allowed,
    },
    {
      phase: "after",
      op,
      callCount,
      checksum: after,
      file: file("after"),
      allowed,
    },
  ];
}

Deno.test("verdict finds nothing when every sample is equal", () => {
  assert.deepEqual(
    verdictOf([...call("Add", 1, 5n, 5n), ...call("Mul", 1, 5n, 5n)]),
    {
      changes: [],
      first_change: null,
      stomp: false,
    },
  );
});

Deno.test("verdict finds nothing without samples", () => {
  const v = new WatchVerdict();
  assert.equal(v.firstChange, null);
  assert.equal(v.stomp, false);
  assert.deepEqual(v.changes, []);
});

Deno.test("verdict names an op that changed a block it was not allowed to write as a stomp", () => {
  const result = verdictOf([
    ...call("Add", 1, 5n, 5n),
    ...call("Copy", 1, 5n, 9n),
    ...call("Mul", 1, 9n, 9n),
  ]);
  assert.deepEqual(result.first_change, {
    op: "Copy",
    call_count: 1,
    before_file: "0_1_Copy_1-w_0_before.bin",
    after_file: "0_1_Copy_1-w_0_after.bin",
  });
  assert.equal(result.stomp, true);
  assert.deepEqual(result.changes, [{
    ...result.first_change,
    allowed: false,
  }]);
});

Deno.test("verdict reports an allowed write without calling it a stomp", () => {
  const result = verdictOf([
    ...call("Fill", 1, 0n, 7n, true),
    ...call("Mul", 1, 7n, 7n),
  ]);
  assert.equal(result.first_change?.op, "Fill");
  assert.equal(result.stomp, false);
  assert.equal(result.changes[0].allowed, true);
});

Deno.test("verdict prefers the first unexpected change over an earlier allowed one", () => {
  const result = verdictOf([
    ...call("Fill", 1, 0n, 7n, true),
    ...call("Copy", 2, 7n, 8n),
    ...call("Fill", 3, 8n, 9n, true),
  ]);
  assert.deepEqual(result.changes.map((c) => [c.op, c.call_count, c.allowed]), [
    ["Fill", 1, true],
    ["Copy", 2, false],
    ["Fill", 3, true],
  ]);
  assert.deepEqual([result.first_change?.op, result.first_change?.call_count], [
    "Copy",
    2,
  ]);
  assert.equal(result.stomp, true);
});

Deno.test("verdict reports a change between two ops as outside any op, naming both", () => {
  const result = verdictOf([
    ...call("Add", 4, 5n, 5n),
    ...call("Mul", 2, 6n, 6n),
  ]);
  assert.deepEqual(result.changes, [{
    op: "Mul",
    call_count: 2,
    before_file: "0_1_Add_4-w_0_after.bin",
    after_file: "0_1_Mul_2-w_0_before.bin",
    outside_op: true,
    previous_op: "Add",
    previous_call_count: 4,
    allowed: false,
  }]);
  assert.equal(result.stomp, true);
  assert.equal(result.first_change?.outside_op, true);
  assert.equal("allowed" in (result.first_change ?? {}), false);
});

Deno.test("verdict does not blame an op whose after sample is missing", () => {
  // dump_nums ran out after Copy's before: Copy's after and Mul's samples never came.
  const [copyBefore] = call("Copy", 1, 5n, 9n);
  assert.deepEqual(
    verdictOf([...call("Add", 1, 5n, 5n), copyBefore]).changes,
    [],
  );
});

Deno.test("verdict does not compare a before with the before of the next op", () => {
  const [addBefore] = call("Add", 1, 5n, 5n);
  const mul = call("Mul", 1, 6n, 6n);
  assert.deepEqual(verdictOf([addBefore, ...mul]).changes, []);
});

Deno.test("verdict does not compare two afters in a row", () => {
  const [, addAfter] = call("Add", 1, 5n, 5n);
  const [, mulAfter] = call("Mul", 1, 6n, 6n);
  assert.deepEqual(verdictOf([addAfter, mulAfter]).changes, []);
});

Deno.test("verdict does not pair a before and an after of different op calls", () => {
  const [addBefore] = call("Add", 1, 5n, 5n);
  const [, addAfter2] = call("Add", 2, 6n, 6n);
  const [, mulAfter] = call("Mul", 1, 6n, 6n);
  assert.deepEqual(verdictOf([addBefore, addAfter2]).changes, []);
  assert.deepEqual(verdictOf([addBefore, mulAfter]).changes, []);
});

Deno.test("verdict does not compare across a gap the daemon marks", () => {
  const v = new WatchVerdict();
  for (const s of call("Mul", 1, 5n, 5n)) v.add(s);
  v.markGap();
  for (const s of call("Fill", 1, 8n, 8n)) v.add(s);
  assert.equal(v.firstChange, null);
});

Deno.test("verdict is incremental: each sample updates the answer", () => {
  const v = new WatchVerdict();
  const [before, after] = call("Copy", 1, 5n, 9n);
  v.add(before);
  assert.equal(v.stomp, false);
  v.add(after);
  assert.equal(v.stomp, true);
  assert.equal(v.firstChange?.op, "Copy");
});

Deno.test("verdict keeps at most maxChanges changes but still finds a later stomp", () => {
  const v = new WatchVerdict({ maxChanges: 2 });
  for (let i = 1; i <= 5; i++) {
    for (const s of call("Fill", i, BigInt(i), BigInt(i + 1), true)) v.add(s);
  }
  for (const s of call("Copy", 1, 6n, 0n)) v.add(s);
  assert.equal(v.changes.length, 2);
  assert.equal(v.droppedChanges, 4);
  assert.equal(v.firstChange?.op, "Copy");
  assert.equal(v.stomp, true);
});

Deno.test("verdict changes are a copy the caller cannot corrupt", () => {
  const v = new WatchVerdict();
  for (const s of call("Copy", 1, 5n, 9n)) v.add(s);
  v.changes.pop();
  assert.equal(v.changes.length, 1);
});

Deno.test("verdict: a change by an op that may write part of the block is a stomp when bytes outside that part changed", () => {
  const sample = (
    phase: "before" | "after",
    checksum: bigint,
    outside: bigint,
  ) => ({
    phase,
    op: "torch._ops.mylib.myop.default",
    callCount: 1,
    checksum,
    file: phase,
    allowed: true,
    outside,
  });
  const inside = new WatchVerdict();
  inside.add(sample("before", 1n, 7n));
  inside.add(sample("after", 2n, 7n));
  assert.equal(inside.stomp, false);
  const beside = new WatchVerdict();
  beside.add(sample("before", 1n, 7n));
  beside.add(sample("after", 2n, 8n));
  assert.equal(beside.stomp, true);
  assert.equal(beside.firstChange?.beyond_writable, true);
  assert.equal(inside.changes[0].beyond_writable, undefined);
});
