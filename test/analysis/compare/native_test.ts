import assert from "node:assert/strict";
import {
  type CompareLevel,
  type CompareRow,
  compareSteps,
  readStep,
  writeCompareCsv,
} from "../../../analysis/compare/mod.ts";
import { nativeCompare } from "../../../analysis/compare/_native_compare.ts";
import { rowAt } from "../../../analysis/compare/columns.ts";
import { compareSummary } from "../../../cli/compare.ts";

const FIXTURES =
  new URL("../../../../shared/fixtures/msmemscope/", import.meta.url).pathname;
const HEADER =
  "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)";

/** A small deterministic generator, so failures replay. */
function random(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return Math.floor((s / 2 ** 32) * n);
  };
}

/** What the TypeScript comparison writes and prints for two logs. */
async function typescript(paths: [string, string], levels: CompareLevel[]) {
  return compareSteps(
    await readStep(paths[0], levels),
    await readStep(paths[1], levels),
  );
}

const AT = new Date(2026, 10, 25, 12, 0, 0);

/**
 * Asserts that the native comparison of `paths` gives the TypeScript one's
 * rows, CSV bytes and summary, or the same error; returns false when it
 * left the logs to the TypeScript comparison.
 */
async function assertSame(
  paths: [string, string],
  levels: CompareLevel[],
): Promise<boolean> {
  let expected: CompareRow[] | Error;
  try {
    expected = await typescript(paths, levels);
  } catch (e) {
    expected = e as Error;
  }
  let native;
  try {
    native = await nativeCompare(paths, levels);
  } catch (e) {
    assert.ok(
      expected instanceof Error,
      `native threw ${e}, TypeScript did not`,
    );
    assert.equal((e as Error).message, expected.message);
    assert.equal((e as Error).name, expected.name);
    return true;
  }
  if (native === undefined) return false;
  using held = native;
  assert.ok(!(expected instanceof Error), `TypeScript threw ${expected}`);
  const rows = expected as CompareRow[];
  const got = Array.from(
    { length: native.columns.device.length },
    (_, i) => rowAt(native.columns, i),
  );
  assert.deepEqual(got, rows);
  assert.deepEqual(
    compareSummary("x.csv", native.columns),
    compareSummary("x.csv", rows),
  );
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_native_compare_" });
  try {
    const a = await writeCompareCsv(`${dir}/native`, held.lines, { at: AT });
    const b = await writeCompareCsv(`${dir}/ts`, rows, { at: AT });
    assert.deepEqual(Deno.readFileSync(a), Deno.readFileSync(b));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
  return true;
}

/** assertSame on two logs written from their text (or bytes). */
async function assertSameOn(
  a: string | Uint8Array,
  b: string | Uint8Array,
  levels: CompareLevel[],
): Promise<boolean> {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_native_compare_" });
  const bytes = (t: string | Uint8Array) =>
    typeof t === "string" ? new TextEncoder().encode(t) : t;
  try {
    Deno.writeFileSync(`${dir}/a.csv`, bytes(a));
    Deno.writeFileSync(`${dir}/b.csv`, bytes(b));
    return await assertSame([`${dir}/a.csv`, `${dir}/b.csv`], levels);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

const LEVELS: CompareLevel[][] = [["op"], ["kernel"], ["op", "kernel"]];

Deno.test("native compare gives the TypeScript comparison's rows, CSV and summary on every fixture pair, at every level", async () => {
  const names = [
    "compare_baseline",
    "compare_leaks",
    "memscope_dump_two_ranks_a",
    "memscope_dump_two_ranks_b",
  ];
  for (const a of names) {
    for (const b of names) {
      for (const levels of LEVELS) {
        const paths: [string, string] = [
          `${FIXTURES}${a}.csv`,
          `${FIXTURES}${b}.csv`,
        ];
        assert.ok(await assertSame(paths, levels), `${a} ${b} ${levels}`);
      }
    }
  }
});

const op = (id: number | string, name: string, device = "0", ts?: string) =>
  `${id},OP_LAUNCH,ATEN_END,${name},${ts ?? `${id}000`},1,1,${device},N/A,,,`;
const pta = (
  id: number | string,
  size: string,
  device = "0",
  ts?: string,
  type = "PTA",
) =>
  `${id},MALLOC,${type},N/A,${
    ts ?? `${id}000`
  },1,1,${device},0x10,"{allocation_id:${id},addr:0x10,size:${size},total:0,used:0}",,`;
const kernel = (id: number, name: string, device = "0") =>
  `${id},KERNEL_LAUNCH,KERNEL_LAUNCH,${name},${id}000,1,1,${device},N/A,"{streamId:0,taskId:${id}}",,`;

const EDGE_CASES: Array<[string, string[], string[], CompareLevel[]]> = [
  [
    "names with commas, doubled quotes and line breaks",
    [op(1, '"aten.a,b"'), pta(2, "64"), op(3, '"say ""hi"""'), pta(4, "8")],
    [op(1, '"aten.a,b"'), pta(2, "128"), op(3, '"line\nbreak"'), pta(4, "8")],
    ["op"],
  ],
  [
    "CRLF line ends",
    [op(1, "mm"), pta(2, "10"), op(3, "t")].map((l) => l + "\r"),
    [op(1, "mm"), pta(2, "30"), op(3, "t")].map((l) => l + "\r"),
    ["op"],
  ],
  [
    "rows out of time order, ties settled by ID",
    [op(5, "b", "0", "100"), pta(2, "7", "0", "100"), op(1, "a", "0", "200")],
    [pta(9, "1", "0", "50"), op(3, "a", "0", "50"), op(2, "b", "0", "50")],
    ["op"],
  ],
  [
    "several devices, interleaved, with N/A, cpu, quoted and zero-padded Device Ids",
    [
      op(1, "mm", "0"),
      op(2, "mm", "1"),
      pta(3, "5", "1"),
      op(4, "t", "N/A"),
      pta(5, "6", "cpu"),
      op(6, "t", '"1"'),
      op(7, "x", "00"),
    ],
    [op(1, "mm", "1"), pta(2, "9", "1"), op(3, "mm", "2"), op(4, "x", "0")],
    ["op"],
  ],
  [
    "sizes missing, spaced, signed or with underscores",
    [op(1, "a"), pta(2, " 1_000 "), op(3, "b"), pta(4, "-5"), op(5, "c")],
    [
      op(1, "a"),
      pta(2, "x"),
      op(3, "b"),
      pta(4, "-0"),
      op(5, "c"),
      '6,FREE,PTA,N/A,6000,1,1,0,0x10,"{addr:0x10, size:77}",,',
      op(7, "d"),
      '8,FREE,PTA,N/A,8000,1,1,0,0x10,"{addr:0x10,blocksize:5,size:9}",,',
    ],
    ["op"],
  ],
  [
    "timestamps short, long, quoted or not numbers",
    [op(1, "a", "0", "7"), op(2, "b", "0", "x1"), op(3, "c", "0", '"12"')],
    [op(1, "a", "0", "123456789012345678901234"), op(2, "b", "0", "")],
    ["op"],
  ],
  [
    "names outside ASCII",
    [op(1, "ümlaut.op"), pta(2, "1"), op(3, "算子")],
    [op(1, "ümlaut.op"), pta(2, "2"), op(3, "算子")],
    ["op"],
  ],
  [
    "MINDSPORE pools at kernel level",
    [kernel(1, "MatMul"), pta(2, "4", "0", undefined, "MINDSPORE")],
    [kernel(1, "MatMul"), pta(2, "8", "0", undefined, "MINDSPORE")],
    ["kernel"],
  ],
  [
    "MINDSPORE pools at op level (refused)",
    [op(1, "a"), pta(2, "4", "0", undefined, "MINDSPORE")],
    [op(1, "a")],
    ["op"],
  ],
  [
    "logs of two frameworks (refused)",
    [op(1, "a"), pta(2, "4")],
    [op(1, "a"), pta(2, "4", "0", undefined, "MINDSPORE")],
    ["op"],
  ],
  [
    "no rows of the level (refused)",
    [pta(1, "4")],
    [pta(1, "4")],
    ["op"],
  ],
  [
    "a log with no rows on any device (refused)",
    [op(1, "a", "N/A")],
    [op(1, "a")],
    ["op"],
  ],
  [
    "one log without rows of the level",
    [pta(1, "4")],
    [op(1, "a"), pta(2, "8")],
    ["op", "kernel"],
  ],
];

for (const [what, a, b, levels] of EDGE_CASES) {
  Deno.test(`native compare agrees with the TypeScript comparison on ${what}`, async () => {
    assert.ok(
      await assertSameOn(
        [HEADER, ...a].join("\n") + "\n",
        [HEADER, ...b].join("\n") + "\n",
        levels,
      ),
    );
  });
}

Deno.test("native compare agrees on a log with a BOM and no newline at its end", async () => {
  assert.ok(
    await assertSameOn(
      "\ufeff" + [HEADER, op(1, "a"), pta(2, "3"), op(3, "b")].join("\n"),
      [HEADER, op(1, "b"), pta(2, "3"), op(3, "a")].join("\n"),
      ["op"],
    ),
  );
});

Deno.test("native compare decodes names that are not UTF-8, or start with a BOM, as the TypeScript comparison's decoder does", async () => {
  // Each "@" becomes the bytes after it: ill-formed sequences of each
  // kind (a lone continuation byte, an overlong form, a surrogate, past
  // U+10FFFF, cut short by the field's end or by a quote, a byte that
  // starts nothing), and a BOM where it goes and where it stays.
  const sequences = [
    [0xff],
    [0x80, 0x80],
    [0xc0, 0x80],
    [0xe0, 0x80, 0x80],
    [0xed, 0xa0, 0x80],
    [0xf4, 0x90, 0x80, 0x80],
    [0xf0, 0x9f, 0x98],
    [0xe4, 0xbd],
    [0xe4, 0xbd, 0x22, 0x22],
    [0xc3, 0xa9, 0xf5, 0xe5, 0x8d, 0xb7],
    [0xef, 0xbb, 0xbf],
  ];
  const enc = new TextEncoder();
  const withBytes = (text: string, bytes: number[]) =>
    Uint8Array.from(
      [...enc.encode(text)].flatMap((c) => c === 64 ? bytes : [c]),
    );
  for (const bytes of sequences) {
    for (const name of ["a@", "@b", '"a@b"', '"x""@"""']) {
      const a = withBytes(
        [HEADER, op(1, name), pta(2, "4"), op(3, "a")].join("\n") + "\n",
        bytes,
      );
      const b = withBytes(
        [HEADER, op(1, "a"), pta(2, "8"), op(3, name)].join("\n") + "\n",
        bytes,
      );
      assert.ok(await assertSameOn(a, b, ["op"]), `${bytes} in ${name}`);
    }
  }
  assert.ok(
    await assertSameOn(
      [HEADER, op(1, "\ufeffa"), op(2, "b\ufeff")].join("\n") + "\n",
      [HEADER, op(1, "a"), op(2, "b\ufeff")].join("\n") + "\n",
      ["op"],
    ),
  );
});

Deno.test("native compare reads a log with columns added before those it reads, its Attr as the 23rd, and leaves one with Attr as the 26th to TypeScript", async () => {
  // A row with `n` more fields after Thread Id (its 7th comma outside
  // quotes).
  const widen = (row: string, n: number) => {
    let commas = 0, quoted = false, at = 0;
    for (; commas < 7; at++) {
      if (row[at] === '"') quoted = !quoted;
      else if (row[at] === "," && !quoted) commas++;
    }
    return row.slice(0, at) + "0,".repeat(n) + row.slice(at);
  };
  const a = [op(1, '"a,b"'), pta(2, "4"), op(3, "b"), pta(4, "8")];
  const b = [op(1, '"a,b"'), pta(2, "8"), op(3, "b")];
  for (const [n, native] of [[13, true], [16, false]] as const) {
    const header = widen(HEADER, n).replace(
      /(Thread Id)(,0)+/,
      (_, t) => t + Array.from({ length: n }, (_, i) => `,Extra ${i}`).join(""),
    );
    const log = (rows: string[]) =>
      [header, ...rows.map((r) => widen(r, n))].join("\n") + "\n";
    assert.equal(await assertSameOn(log(a), log(b), ["op"]), native, `${n}`);
  }
});

Deno.test("native compare leaves to TypeScript what it cannot read the same for certain", async () => {
  // An ID that is no number, a size past 2^53 (String() would round its
  // digits).
  const bad: Array<string | Uint8Array> = [
    [HEADER, op("x", "a")].join("\n") + "\n",
    [HEADER, op(1, "a"), pta(2, "99999999999999999999")].join("\n") + "\n",
  ];
  for (const log of bad) {
    const other = [HEADER, op(1, "a")].join("\n") + "\n";
    assert.equal(await assertSameOn(log, other, ["op"]), false);
  }
});

/** A random log: ops, kernels and pool rows on a few devices, shuffled. */
function randomLog(next: (n: number) => number, variant: boolean): string {
  const names = ["mm", "t", '"a,b"', "addmm", "relu", "sum"];
  const lines = [HEADER];
  const rows = 20 + next(200);
  for (let id = 1; id <= rows; id++) {
    const device = ["0", "1", "2", "N/A"][next(4)];
    const ts = String(1764753083997498270n + BigInt(next(variant ? 50 : 30)));
    const kind = next(10);
    if (kind < 4) {
      lines.push(op(id, names[next(variant ? 6 : 4)], device, ts));
    } else if (kind < 6) {
      lines.push(kernel(id, names[next(6)], device));
    } else if (kind < 9) {
      lines.push(pta(id, String(512 * next(100)), device, ts));
    } else {
      lines.push(
        `${id},OP_LAUNCH,ATEN_START,${
          names[next(6)]
        },${ts},1,1,${device},N/A,,,`,
      );
    }
  }
  // A window shuffle, as a log written at free time is.
  for (let i = lines.length - 1; i > 1; i--) {
    const j = Math.max(1, i - next(8));
    [lines[i], lines[j]] = [lines[j], lines[i]];
  }
  return lines.join(next(2) ? "\n" : "\r\n") + "\n";
}

Deno.test("native compare agrees with the TypeScript comparison on 150 random pairs of logs", async () => {
  const next = random(11);
  for (let round = 0; round < 150; round++) {
    const levels = LEVELS[round % 3];
    assert.ok(
      await assertSameOn(randomLog(next, false), randomLog(next, true), levels),
      `round ${round}`,
    );
  }
});
