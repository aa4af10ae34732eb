import assert from "node:assert/strict";
import { compareSummary } from "../../cli/compare.ts";
import { DAEMON_LIBRARY } from "../../ffi/bindings.ts";
import {
  parseCompareInput,
  parseCompareLevel,
} from "../../cli/compare_options.ts";

const FIXTURES =
  new URL("../../../shared/fixtures/msmemscope/", import.meta.url).pathname;
const BASELINE = `${FIXTURES}compare_baseline.csv`;
const LEAKS = `${FIXTURES}compare_leaks.csv`;
const RANK_A = `${FIXTURES}memscope_dump_two_ranks_a.csv`;
const RANK_B = `${FIXTURES}memscope_dump_two_ranks_b.csv`;
const MAIN = new URL("../../main.ts", import.meta.url).pathname;

function tempDir(): string {
  return Deno.makeTempDirSync({ prefix: "stompwatch_compare_" });
}

Deno.test("compare's summary names the file and lists the largest differences in bytes and MB", () => {
  const row = { event: "OP_LAUNCH", device: 0, base: 10, compare: 10, diff: 0 };
  const lines = compareSummary("out.csv", [
    { ...row, name: "same" },
    { ...row, name: "shrank", base: 2097152, compare: 0, diff: -2097152 },
    { ...row, name: "grew", base: null, compare: 1048576, diff: 1048576 },
  ]);
  assert.deepEqual(lines, [
    "Wrote out.csv: 3 rows on 1 device, 0 only in base, 1 only in compare",
    "Largest differences (compare - base):",
    "  -2097152 B (-2.00 MB)  device 0  shrank  base 2097152, compare 0",
    "  +1048576 B (+1.00 MB)  device 0  grew  base N/A, compare 1048576",
  ]);
});

/** main.ts with the permissions ./stompwatch grants compare. */
async function cli(args: string[], reads: string[], out: string) {
  const result = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      `--allow-read=${[out, ...reads].join(",")}`,
      `--allow-write=${out}`,
      `--allow-ffi=${DAEMON_LIBRARY}`,
      MAIN,
      "compare",
      ...args,
      "--output",
      out,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return {
    code: result.code,
    stdout: dec.decode(result.stdout),
    stderr: dec.decode(result.stderr),
  };
}

Deno.test("stompwatch compare writes the CSV and prints its path and the top differences", async () => {
  const out = tempDir();
  const { code, stdout, stderr } = await cli(
    ["--input", `${BASELINE}，${LEAKS}`],
    [BASELINE, LEAKS],
    out,
  );
  assert.equal(stderr, "");
  assert.equal(code, 0);
  const lines = stdout.trimEnd().split("\n");
  const path = lines[0].match(
    /^Wrote (\S+): 44 rows on 1 device, 0 only in base, 4 only in compare$/,
  )?.[1];
  assert.ok(path?.startsWith(`${out}/compare/memory_compare_`), lines[0]);
  assert.match(path!, /memory_compare_\d{14}\.csv$/);
  assert.ok(Deno.statSync(path!).isFile);
  assert.equal(lines[1], "Largest differences (compare - base):");
  assert.equal(
    lines[2],
    "  +4000256 B (+3.81 MB)  device 0  torch._ops.aten.randn.default  base N/A, compare 4000256",
  );
  assert.equal(lines.length, 2 + 7);
  Deno.removeSync(out, { recursive: true });
});

const BAD_INPUTS: Array<[string, string[], RegExp]> = [
  [
    "no --input",
    [],
    /^stompwatch: compare needs --input BASE\.csv,COMPARE\.csv/,
  ],
  [
    "one path",
    ["--input", BASELINE],
    /^stompwatch: Invalid --input value: .*exactly two/,
  ],
  [
    "three paths",
    ["--input", `${BASELINE},${LEAKS},${LEAKS}`],
    /^stompwatch: Invalid --input value: .*exactly two/,
  ],
  [
    "a missing file",
    ["--input", `${BASELINE},${FIXTURES}nope.csv`],
    /^stompwatch: Cannot read .*nope\.csv: no such file; /,
  ],
  [
    "a file that is not an msMemScope log",
    ["--input", `${BASELINE},${MAIN}`],
    /^stompwatch: Not an msMemScope event log: .*main\.ts/,
  ],
  [
    "an unknown --level",
    ["--input", `${BASELINE},${LEAKS}`, "--level", "step"],
    /^stompwatch: Invalid --level value: step; use op \(default\), kernel, or op,kernel$/,
  ],
  [
    "a level with no rows in either file",
    ["--input", `${RANK_A},${RANK_B}`],
    /^stompwatch: No op-level rows in .*two_ranks_a\.csv or .*two_ranks_b\.csv: .*; try --level kernel$/,
  ],
];

for (const [what, args, message] of BAD_INPUTS) {
  Deno.test(`stompwatch compare exits 2 with one line for ${what}`, async () => {
    const out = tempDir();
    const { code, stdout, stderr } = await cli(
      args,
      [BASELINE, LEAKS, RANK_A, RANK_B, MAIN, `${FIXTURES}nope.csv`],
      out,
    );
    assert.equal(code, 2);
    assert.equal(stdout, "");
    assert.equal(stderr.trimEnd().split("\n").length, 1, stderr);
    assert.match(stderr.trimEnd(), message);
    assert.deepEqual([...Deno.readDirSync(out)], []);
    Deno.removeSync(out, { recursive: true });
  });
}

Deno.test("stompwatch compare exits 2 with one line for a log missing a column", async () => {
  const out = tempDir();
  const bad = `${out}/no_attr.csv`;
  Deno.writeTextFileSync(
    bad,
    "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr\n",
  );
  const { code, stderr } = await cli(["--input", `${BASELINE},${bad}`], [
    BASELINE,
  ], out);
  assert.equal(code, 2);
  assert.equal(stderr.trimEnd().split("\n").length, 1, stderr);
  assert.match(
    stderr,
    /^stompwatch: Wrong header in .*no_attr\.csv: missing column "Attr"/,
  );
  Deno.removeSync(out, { recursive: true });
});

Deno.test("stompwatch compare writes base N/A rows for a log without kernel rows against one with them", async () => {
  const out = tempDir();
  const { code, stdout, stderr } = await cli(
    ["--input", `${BASELINE},${RANK_A}`, "--level", "kernel"],
    [BASELINE, RANK_A],
    out,
  );
  assert.equal(stderr, "");
  assert.equal(code, 0);
  // RANK_A has 12 KERNEL_LAUNCH rows on devices 0 and 1; BASELINE none.
  assert.match(
    stdout,
    /^Wrote \S+: 12 rows on 2 devices, 0 only in base, 12 only in compare\n/,
  );
  const path = stdout.split(" ")[1].replace(/:$/, "");
  const rows = Deno.readTextFileSync(path).trimEnd().split("\n").slice(2);
  assert.equal(rows.length, 12);
  for (const row of rows) {
    const [event, , device, base, compare, diff] = row.split(",");
    assert.equal(event, "KERNEL_LAUNCH");
    assert.ok(device === "0" || device === "1", row);
    assert.equal(base, "N/A");
    assert.equal(diff, compare);
  }
  Deno.removeSync(out, { recursive: true });
});

Deno.test("stompwatch compare refuses a FIFO as a log instead of waiting for a writer", async () => {
  const out = tempDir();
  const fifo = `${tempDir()}/memscope_dump.csv`;
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.ok(made.success);
  // Only a guard against hanging the suite: opening a FIFO with no writer
  // would wait forever.
  const result = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      `--allow-read=${out},${BASELINE},${fifo}`,
      `--allow-write=${out}`,
      `--allow-ffi=${DAEMON_LIBRARY}`,
      MAIN,
      "compare",
      "--input",
      `${BASELINE},${fifo}`,
      "--output",
      out,
    ],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const stderr = new TextDecoder().decode(result.stderr);
  assert.equal(result.code, 2, stderr);
  assert.match(
    stderr,
    /^stompwatch: Cannot read .*memscope_dump\.csv: not a file; pass the path of an msMemScope event log/,
  );
  Deno.removeSync(out, { recursive: true });
});

Deno.test("compare's --level is op by default and takes kernel or both, with either comma", () => {
  assert.deepEqual(parseCompareLevel(undefined), ["op"]);
  assert.deepEqual(parseCompareLevel("kernel"), ["kernel"]);
  assert.deepEqual(parseCompareLevel("kernel，op"), ["op", "kernel"]);
  assert.throws(() => parseCompareLevel("step"), /Invalid --level value: step/);
});

Deno.test("compare's --input splits on an ASCII or a full-width comma", () => {
  assert.deepEqual(parseCompareInput("a.csv,b.csv"), ["a.csv", "b.csv"]);
  assert.deepEqual(parseCompareInput("a.csv，b.csv"), ["a.csv", "b.csv"]);
  assert.throws(() => parseCompareInput("a.csv,b.csv,c.csv"), /exactly two/);
});
