import assert from "node:assert/strict";
import { nativeFirstPass } from "../../../analysis/leaks/_native_first_pass.ts";
import { checkOptions } from "../../../analysis/leaks/options.ts";
import { nativeCompare } from "../../../analysis/compare/_native_compare.ts";
import {
  MEMSCOPE_HEADER,
  openEventLog,
  readMemscopeCsv,
  readMemscopeRowsAt,
} from "../../../analysis/memscope_csv/mod.ts";

const MiB = 1 << 20;
const HEADER = MEMSCOPE_HEADER.join(",");

const mark = (id: number) => `${id},MSTX,Mark,"step",${id}000,10,11,0,N/A,,,`;
const op = (id: number, at: string) =>
  `${id},OP_LAUNCH,${at},torch._ops.aten.t.default,${id}000,10,11,0,N/A,,,`;

/** A MALLOC row of exactly `length` bytes, its Attr padded. */
function mallocOfLength(id: number, length: number): string {
  const head = `${id},MALLOC,HAL,N/A,1000,10,11,0,0x${
    (0x1000 * id).toString(16).padStart(16, "0")
  },"{size:64,x:`;
  const tail = `}",,`;
  return head + "y".repeat(length - head.length - tail.length) + tail;
}

/**
 * A log whose long row starts `from` bytes after a multiple of 2 MiB (the
 * TypeScript reader's reads) and is `length` bytes long; `open`: it is the
 * last, its quote never closed.
 */
function logWith(
  from: number,
  length: number,
  open = false,
): { text: string; at: number } {
  const rows = [HEADER, mark(1), op(2, "ATEN_START"), op(3, "ATEN_END")];
  let at = rows.join("\n").length + 1, id = 4;
  if (from < 0) {
    // The first data row.
    const long = mallocOfLength(id++, length);
    rows.splice(1, 0, long);
    return { text: rows.join("\n") + "\n", at: HEADER.length + 1 };
  }
  for (; at < 3 * MiB; id++) {
    const row = mallocOfLength(id, 200);
    rows.push(row);
    at += row.length + 1;
  }
  // A row that brings the long one to its place.
  const want = (Math.ceil(at / (2 * MiB)) + 1) * 2 * MiB + from;
  rows.push(mallocOfLength(id++, want - at - 1));
  const long = mallocOfLength(id++, length);
  if (open) {
    return { text: rows.join("\n") + "\n" + long.slice(0, -3), at: want };
  }
  rows.push(long, mark(id++), mark(id++));
  for (let n = 0; n < 20_000; n++, id++) rows.push(mallocOfLength(id, 200));
  return { text: rows.join("\n") + "\n", at: want };
}

/** The logs of long rows, and whether the TypeScript reader refuses each. */
function longRowLogs(): Array<[string, { text: string; at: number }, boolean]> {
  return [
    // Rows the native passes once left to the TypeScript reader (over 8
    // MiB carried from one of their reads to the next): 13 MiB, and 16 MiB
    // and 1 KiB starting just past one of its reads, so that no read of
    // its ends over 16 MiB into the row.
    ["13 MiB", logWith(100, 13 * MiB), false],
    [
      "16 MiB + 1 KiB, no read ends past 16 MiB in it",
      logWith(2048, 16 * MiB + 1024),
      false,
    ],
    // The same length starting just before one of its reads: refused.
    [
      "16 MiB + 1 KiB, a read ends past 16 MiB in it",
      logWith(2 * MiB - 100, 16 * MiB + 1024),
      true,
    ],
    // A read ends 16 MiB + 1 byte into the row: refused where that read
    // stops short of its newline, taken where the newline ends the read.
    [
      "16 MiB + 1, its newline where a read ends",
      logWith(2 * MiB - 1, 16 * MiB + 1),
      true,
    ],
    [
      "16 MiB, its newline last in a read",
      logWith(2 * MiB - 1, 16 * MiB),
      false,
    ],
    // Past 18 MiB: refused wherever it lies (and read in two halves).
    ["40 MiB", logWith(0, 40 * MiB), true],
    // A quote left open to the end of the file.
    ["15 MiB left open at the end", logWith(0, 15 * MiB, true), false],
    // The first data row, where a reader that finds it with reads of its
    // own must read as the reader does.
    ["the first data row, 16.5 MiB", logWith(-1, 16.5 * MiB), false],
    ["17 MiB left open at the end", logWith(0, 17 * MiB, true), true],
  ];
}

/** The TypeScript reader's refusal of the log at `path`, if any. */
async function typescriptRefusal(path: string): Promise<string | undefined> {
  try {
    await readMemscopeCsv(path, () => {});
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

Deno.test("check-leaks' and compare's native passes refuse the rows the TypeScript reader refuses, with its message, and read every other natively", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_row_room_" });
  const path = `${dir}/memscope_dump.csv`, plain = `${dir}/plain.csv`;
  Deno.writeTextFileSync(plain, logWith(0, 1000).text);
  const checked = checkOptions({ mstxInfo: "step" });
  for (const [name, { text }, refused] of longRowLogs()) {
    Deno.writeTextFileSync(path, text);
    const refusal = await typescriptRefusal(path);
    assert.equal(
      refusal !== undefined,
      refused,
      `${name}: the TypeScript reader`,
    );
    if (refusal) {
      assert.match(refusal, /^Row at line \d+ of .* runs on for over 16 MiB/);
    }
    using log = await openEventLog(path);
    const leaks = await nativeFirstPass(log, checked).then(
      (
        first,
      ) => (assert.ok(first, `${name}: check-leaks fell back`), undefined),
      (e: Error) => e.message,
    );
    assert.equal(leaks, refusal, `${name}: check-leaks`);
    // The log compared with a plain one, either side.
    for (const pair of [[path, plain], [plain, path]] as const) {
      const compared = await nativeCompare(pair, ["op"]).then(
        (
          read,
        ) => (assert.ok(read, `${name}: compare fell back`),
          read[Symbol.dispose](),
          undefined),
        (e: Error) => e.message,
      );
      assert.equal(compared, refusal, `${name}: compare ${pair}`);
    }
  }
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("a row read back by its offset is refused where the TypeScript reader refuses it and read however long else, from an opened log (natively) and from a path", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_row_room_" });
  const path = `${dir}/memscope_dump.csv`;
  for (const [name, { text, at }, refused] of longRowLogs()) {
    Deno.writeTextFileSync(path, text);
    using log = await openEventLog(path);
    for (const source of [log, path]) {
      const lengths: number[] = [];
      const back = readMemscopeRowsAt(
        source,
        [at],
        (r) => lengths.push(r.attr.length),
      );
      if (refused) {
        await assert.rejects(
          back,
          /^MemscopeCsvError: Row at byte \d+ of .* runs on for over 16 MiB/,
          name,
        );
      } else {
        await back;
        assert.equal(lengths.length, 1, name);
        assert.ok(lengths[0] > 12 * MiB, name);
      }
    }
  }
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("rows read back from a log now shorter than the read they came from are refused as cut, not read as it stands", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_row_room_" });
  const path = `${dir}/memscope_dump.csv`;
  const rows = [HEADER, mark(1)];
  for (let id = 2; id < 200; id++) rows.push(mallocOfLength(id, 100));
  const text = rows.join("\n") + "\n";
  Deno.writeTextFileSync(path, text);
  const offsets: number[] = [];
  await readMemscopeCsv(path, (r) => offsets.push(r.offset));
  // Cut inside the last row: the row is there, but short of its end.
  Deno.truncateSync(path, text.length - 50);
  using log = await openEventLog(path);
  for (const source of [log, path]) {
    const last = offsets.slice(-1);
    await assert.rejects(
      readMemscopeRowsAt(source, last, () => {}, { logBytes: text.length }),
      /got shorter while it was read/,
    );
    // Rows past the end: gone.
    Deno.truncateSync(path, text.length - 500);
    await assert.rejects(
      readMemscopeRowsAt(source, offsets, () => {}),
      /got shorter while it was read/,
    );
    Deno.writeTextFileSync(path, text);
    Deno.truncateSync(path, text.length - 50);
  }
  // Cut while its rows are read back (the first row's callback cuts it).
  Deno.writeTextFileSync(path, text);
  await assert.rejects(
    readMemscopeRowsAt(path, offsets, (r) => {
      if (r.offset === offsets[0]) Deno.truncateSync(path, offsets[1]);
    }),
    /got shorter while it was read/,
  );
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("rows read back from a log that grew since its offsets were read are read as they were: a last row then half written, half written", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_row_room_" });
  const path = `${dir}/memscope_dump.csv`;
  const text = [HEADER, mark(1), mallocOfLength(2, 100)].join("\n");
  const half = text.slice(0, -40);
  Deno.writeTextFileSync(path, half);
  const offsets: number[] = [], attrs: string[] = [];
  await readMemscopeCsv(path, (r) => {
    offsets.push(r.offset);
    attrs.push(r.attr);
  });
  Deno.writeTextFileSync(path, text.slice(-40) + "\n", { append: true });
  using log = await openEventLog(path);
  for (const source of [log, path]) {
    const back: string[] = [];
    await readMemscopeRowsAt(source, offsets, (r) => back.push(r.attr), {
      logBytes: half.length,
    });
    assert.deepEqual(back, attrs);
    assert.ok(!attrs[1].endsWith("}"), "the row read back half written");
  }
  Deno.removeSync(dir, { recursive: true });
});
