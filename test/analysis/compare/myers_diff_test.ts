import assert from "node:assert/strict";
import { type Edit, myersDiff } from "../../../analysis/compare/mod.ts";
import {
  DEFAULT_EXACT_STEPS,
  DEFAULT_TRACE_BUDGET,
} from "../../../analysis/compare/myers_diff.ts";
import { myersDiffNative } from "../../../ffi/bindings.ts";
import { myersDiff as myersBeforeBand } from "./_myers_before_band.ts";

/** The script as diff(1)-style lines: "  x" kept, "- x" dropped, "+ x" added. */
function render(a: string, b: string, edits: Edit[]): string[] {
  return edits.map((e) =>
    e.kind === "equal"
      ? `  ${a[e.a]}`
      : e.kind === "delete"
      ? `- ${a[e.a]}`
      : `+ ${b[e.b]}`
  );
}

function diff(a: string, b: string, budget?: number): string[] {
  return render(a, b, myersDiff([...a], [...b], { traceBudgetBytes: budget }));
}

/** Edits are in order, cover both sides exactly once, and pair equals. */
function assertValid<T>(a: T[], b: T[], edits: Edit[]): number {
  let i = 0, j = 0, changes = 0;
  for (const e of edits) {
    if (e.kind === "equal") {
      assert.equal(e.a, i++);
      assert.equal(e.b, j++);
      assert.equal(a[e.a], b[e.b]);
    } else if (e.kind === "delete") {
      assert.equal(e.a, i++);
      changes++;
    } else {
      assert.equal(e.b, j++);
      changes++;
    }
  }
  assert.equal(i, a.length);
  assert.equal(j, b.length);
  return changes;
}

function lcsLength<T>(a: T[], b: T[]): number {
  let prev = new Array(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    const row = [0];
    for (let j = 1; j <= b.length; j++) {
      row[j] = a[i - 1] === b[j - 1]
        ? prev[j - 1] + 1
        : Math.max(prev[j], row[j - 1]);
    }
    prev = row;
  }
  return prev[b.length];
}

/** A small deterministic generator, so failures replay. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

Deno.test("myersDiff gives the greedy path of Myers' paper example, deletions before insertions", () => {
  assert.deepEqual(diff("ABCABBA", "CBABAC"), [
    "- A",
    "- B",
    "  C",
    "+ B",
    "  A",
    "  B",
    "- B",
    "  A",
    "+ C",
  ]);
});

Deno.test("myersDiff keeps equal sequences whole", () => {
  assert.deepEqual(diff("abc", "abc"), ["  a", "  b", "  c"]);
});

Deno.test("myersDiff of two empty sequences is empty", () => {
  assert.deepEqual(myersDiff([], []), []);
});

Deno.test("myersDiff inserts everything when the first side is empty", () => {
  assert.deepEqual(diff("", "xy"), ["+ x", "+ y"]);
});

Deno.test("myersDiff deletes everything when the second side is empty", () => {
  assert.deepEqual(diff("xy", ""), ["- x", "- y"]);
});

Deno.test("myersDiff finds ops inserted in the middle and at both ends", () => {
  assert.deepEqual(diff("tms", "xtmrqsy"), [
    "+ x",
    "  t",
    "  m",
    "+ r",
    "+ q",
    "  s",
    "+ y",
  ]);
});

Deno.test("myersDiff finds ops deleted in the middle and at both ends", () => {
  assert.deepEqual(diff("xtmrqsy", "tms"), [
    "- x",
    "  t",
    "  m",
    "- r",
    "- q",
    "  s",
    "- y",
  ]);
});

Deno.test("myersDiff writes a replacement as a deletion then an insertion", () => {
  assert.deepEqual(diff("abc", "axc"), ["  a", "- b", "+ x", "  c"]);
});

Deno.test("myersDiff scripts are valid and as short as the LCS allows, greedy and linear-space alike", () => {
  const next = random(42);
  for (let round = 0; round < 300; round++) {
    const gen = () =>
      Array.from(
        { length: Math.floor(next() * 40) },
        () => "abcd"[Math.floor(next() * 4)],
      );
    const a = gen(), b = gen();
    const shortest = a.length + b.length - 2 * lcsLength(a, b);
    assert.equal(assertValid(a, b, myersDiff(a, b)), shortest);
    const linear = myersDiff(a, b, { traceBudgetBytes: 0 });
    assert.equal(assertValid(a, b, linear), shortest);
  }
});

Deno.test("myersDiff falls back to linear space when the greedy trace passes its budget", () => {
  const next = random(7);
  const a = Int32Array.from({ length: 5_000 }, () => next() * 50);
  const b = Int32Array.from({ length: 5_000 }, () => next() * 50);
  // D is in the tens of thousands here: the greedy trace would need GBs.
  const edits = myersDiff(a, b, { traceBudgetBytes: 1 << 20 });
  const changes = assertValid([...a], [...b], edits);
  assert.ok(changes > 2_000, `expected a large edit distance, got ${changes}`);
});

Deno.test("myersDiff with a tiny budget still finds the single inserted op", () => {
  const a = [..."abcdefghij"];
  const b = [..."abcdeXfghij"];
  const lines = render(
    a.join(""),
    b.join(""),
    myersDiff(a, b, { traceBudgetBytes: 0 }),
  );
  assert.deepEqual(lines.filter((l) => !l.startsWith(" ")), ["+ X"]);
});

interface PathNode {
  x: number;
  y: number;
  /** x where the snake after this node's edit starts. */
  snakeFrom: number;
  kind?: "insert" | "delete";
  prev?: PathNode;
}

/**
 * Reference: the greedy search keeping a predecessor pointer per frontier
 * node, as msMemScope's MemoryCompare::BuildPath does.
 */
function pointerGreedy<T>(a: T[], b: T[]): Edit[] {
  const v = new Map<number, PathNode>([[1, { x: 0, y: -1, snakeFrom: 0 }]]);
  for (let d = 0;; d++) {
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && v.get(k - 1)!.x < v.get(k + 1)!.x);
      const from = down ? v.get(k + 1)! : v.get(k - 1)!;
      let x = down ? from.x : from.x + 1;
      const node: PathNode = {
        x,
        y: 0,
        snakeFrom: x,
        kind: d === 0 ? undefined : down ? "insert" : "delete",
        prev: d === 0 ? undefined : from,
      };
      let y = x - k;
      while (x < a.length && y < b.length && a[x] === b[y]) x++, y++;
      node.x = x;
      node.y = y;
      v.set(k, node);
      if (x >= a.length && y >= b.length) {
        const out: Edit[] = [];
        for (let n: PathNode | undefined = node; n; n = n.prev) {
          for (let i = n.x - 1; i >= n.snakeFrom; i--) {
            out.push({ kind: "equal", a: i, b: i - (n.x - n.y) });
          }
          const startY = n.snakeFrom - (n.x - n.y);
          if (n.kind === "insert") out.push({ kind: "insert", b: startY - 1 });
          if (n.kind === "delete") {
            out.push({ kind: "delete", a: n.snakeFrom - 1 });
          }
        }
        return out.reverse();
      }
    }
  }
}

Deno.test("myersDiff follows the same path as a predecessor-pointer greedy search, as msMemScope's compare does", () => {
  const next = random(2025);
  for (let round = 0; round < 300; round++) {
    const gen = () =>
      Array.from(
        { length: Math.floor(next() * 30) },
        () => "abc"[Math.floor(next() * 3)],
      );
    const a = gen(), b = gen();
    assert.deepEqual(myersDiff(a, b), pointerGreedy(a, b), `${a} / ${b}`);
  }
});

/** Random sequences with runs in common: inserted, dropped, replaced. */
function randomPair(next: () => number): [Int32Array, Int32Array] {
  const alphabet = 1 + Math.floor(next() * 8);
  const pick = () => Math.floor(next() * alphabet);
  const base = Array.from({ length: Math.floor(next() * 80) }, pick);
  const change = (x: number[]) =>
    x.filter(() => next() > 0.25 * next())
      .flatMap((v) => next() < 0.15 ? [v, pick()] : [v]);
  return [
    Int32Array.from(next() < 0.3 ? base : change(base)),
    Int32Array.from(change(base)),
  ];
}

const BUDGETS = [0, 16, 100, 400, undefined];

Deno.test("myersDiff gives the very script of the diff before its band, greedy and linear-space alike, on 5000 random pairs", () => {
  const next = random(77);
  for (let round = 0; round < 5000; round++) {
    const [a, b] = randomPair(next);
    const budget = BUDGETS[round % BUDGETS.length];
    const options = { traceBudgetBytes: budget };
    assert.deepEqual(
      myersDiff(a, b, options),
      myersBeforeBand(a, b, options),
      `${a} / ${b} / ${budget}`,
    );
  }
});

Deno.test("myersDiff gives the script of the diff before its band where one side has thousands more ops", () => {
  const step = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3];
  const next = [3, 1, 7, 4, 1, 5, 9, 8, 2, 6, 5, 3];
  const a = Array.from({ length: 300 }, () => step).flat();
  const b = Array.from({ length: 300 }, () => next).flat();
  for (const budget of [0, undefined]) {
    const options = { traceBudgetBytes: budget };
    assert.deepEqual(myersDiff(a, b, options), myersBeforeBand(a, b, options));
    assert.deepEqual(myersDiff(b, a, options), myersBeforeBand(b, a, options));
  }
});

/** The native diff's script, as myersDiff gives one. */
function nativeDiff(
  a: Int32Array,
  b: Int32Array,
  { traceBudgetBytes, exactSteps }: {
    traceBudgetBytes?: number;
    exactSteps?: number;
  },
): Edit[] {
  const native = myersDiffNative(
    a,
    b,
    traceBudgetBytes ?? DEFAULT_TRACE_BUDGET,
    exactSteps ?? DEFAULT_EXACT_STEPS,
  );
  return Array.from(
    native.kind,
    (k, i): Edit =>
      k === 0
        ? { kind: "equal", a: native.a[i], b: native.b[i] }
        : k === 1
        ? { kind: "delete", a: native.a[i] }
        : { kind: "insert", b: native.b[i] },
  );
}

/**
 * Whether `edits` turns `a` into `b`: every element of each side once, in
 * order, an equal edit pairing two that are equal.
 */
function turnsInto(a: ArrayLike<number>, b: ArrayLike<number>, edits: Edit[]) {
  let i = 0, j = 0;
  for (const e of edits) {
    if (e.kind !== "insert" && e.a !== i++) return false;
    if (e.kind !== "delete" && e.b !== j++) return false;
    if (e.kind === "equal" && a[e.a] !== b[e.b]) return false;
  }
  return i === a.length && j === b.length;
}

const EXACT_STEPS = [0, 40, 40.5, NaN, 1000, undefined];

Deno.test("the native diff gives myersDiff's script on 5000 random pairs and every budget, exact or piece by piece", () => {
  const next = random(78);
  for (let round = 0; round < 5000; round++) {
    const [a, b] = randomPair(next);
    const options = {
      traceBudgetBytes: BUDGETS[round % BUDGETS.length],
      exactSteps: EXACT_STEPS[round % EXACT_STEPS.length],
    };
    const edits = myersDiff(a, b, options);
    assert.deepEqual(
      nativeDiff(a, b, options),
      edits,
      `${a} / ${b} / ${JSON.stringify(options)}`,
    );
    assert.ok(turnsInto(a, b, edits));
  }
});

/**
 * Two steps of `length` ops: the second with every `every`th op renamed,
 * and a run of `inserted` new ops in its middle.
 */
function renamedEvery(
  length: number,
  every: number,
  inserted = 0,
): [Int32Array, Int32Array] {
  const next = random(length + every);
  const a = Int32Array.from({ length }, () => Math.floor(next() * 50));
  const renamed = Array.from(a, (op, i) => i % every === every - 1 ? 50 : op);
  const middle = renamed.length >> 1;
  const added = Array.from({ length: inserted }, (_, i) => 60 + i % 7);
  return [
    a,
    Int32Array.from([
      ...renamed.slice(0, middle),
      ...added,
      ...renamed.slice(middle),
    ]),
  ];
}

Deno.test("the native diff runs out of steps at the very step myersDiff does, the probes that can only fail counted, not run", () => {
  // myers.c counts the cells of the probes below a bound on D (each
  // value's surplus on one side) instead of running them; myersDiff runs
  // them. Pairs whose pieces differ from the whole search's script.
  const pairs = [
    renamedEvery(1200, 6, 300),
    renamedEvery(2000, 20, 150),
    renamedEvery(2000, 20, 150).reverse(),
  ];
  for (const [a, b] of pairs) {
    const exact = JSON.stringify(myersDiff(a, b));
    const script = (exactSteps: number) =>
      JSON.stringify(myersDiff(a, b, { exactSteps }));
    assert.notEqual(script(0), exact);
    // The fewest steps that give the whole search's script.
    let lo = 0, hi = 2 ** 24;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (script(mid) === exact) hi = mid;
      else lo = mid + 1;
    }
    for (const steps of [lo - 1, lo, lo + 1, lo >> 1, lo >> 3, 1000, 0]) {
      assert.equal(
        JSON.stringify(nativeDiff(a, b, { exactSteps: steps })),
        script(steps),
        `${steps} steps, the switch at ${lo}`,
      );
    }
  }
});

Deno.test("past its steps the diff is found piece by piece, in C as in TypeScript: a script that turns one step into the other, the shortest one where the steps differ here and there, and near it across a run of added ops", () => {
  const edited = (edits: Edit[]) => edits.filter((e) => e.kind !== "equal");
  const cases = [[20_000, 20, 0], [6_000, 5, 0], [20_000, 50, 200], [
    20_000,
    50,
    2_000,
  ]];
  for (const [length, every, inserted] of cases) {
    const [a, b] = renamedEvery(length, every, inserted);
    const exact = myersDiff(a, b), pieces = myersDiff(a, b, { exactSteps: 0 });
    // As text: node:assert's deepEqual of a long failing script takes minutes.
    const text = JSON.stringify(pieces);
    assert.equal(JSON.stringify(nativeDiff(a, b, { exactSteps: 0 })), text);
    if (!inserted) assert.equal(text, JSON.stringify(exact));
    assert.ok(turnsInto(a, b, pieces));
    // 200 added: 1,086 edits against 1,000; 2,000 added: 2,840 and 2,800.
    assert.ok(edited(pieces).length <= 1.1 * edited(exact).length);
  }
  // Random pairs of up to 3,000 ops, pieces of 512 each side: scattered
  // changes, runs of new ops, and unrelated stretches.
  const next = random(79);
  for (let round = 0; round < 60; round++) {
    const alphabet = 2 + Math.floor(next() * 40);
    const pick = () => Math.floor(next() * alphabet);
    const a = Array.from({ length: Math.floor(next() * 3000) }, pick);
    const b: number[] = [];
    for (let i = 0; i < a.length; i++) {
      const r = next();
      if (r < 0.002) b.push(...Array.from({ length: 300 }, pick));
      if (r < 0.05) b.push(pick());
      else if (r > 0.97) continue;
      else b.push(a[i]);
    }
    const ia = Int32Array.from(a), ib = Int32Array.from(b);
    const edits = myersDiff(ia, ib, { exactSteps: 0 });
    assert.ok(turnsInto(ia, ib, edits), `round ${round}`);
    assert.equal(
      JSON.stringify(nativeDiff(ia, ib, { exactSteps: 0 })),
      JSON.stringify(edits),
    );
  }
});

Deno.test("two unrelated steps of 200,000 ops each are diffed, piece by piece past the default steps", () => {
  const next = random(80);
  const a = Int32Array.from(
    { length: 200_000 },
    () => Math.floor(next() * 1e6),
  );
  const b = Int32Array.from(
    { length: 200_000 },
    () => Math.floor(next() * 1e6),
  );
  const edits = nativeDiff(a, b, {});
  assert.ok(turnsInto(a, b, edits));
  assert.equal(JSON.stringify(edits), JSON.stringify(myersDiff(a, b)));
});
