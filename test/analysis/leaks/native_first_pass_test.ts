import assert from "node:assert/strict";
import { jostled, seeded } from "./_seeded.ts";
import { firstPass } from "../../../analysis/leaks/_first_pass.ts";
import { nativeFirstPass } from "../../../analysis/leaks/_native_first_pass.ts";
import {
  nativeStream,
  nativeStreamPass,
  nativeWindowPass,
} from "../../../analysis/leaks/_native_window_pass.ts";
import { FoundLeaks } from "../../../analysis/leaks/_found.ts";
import {
  type CheckLeaksOptions,
  checkOptions,
} from "../../../analysis/leaks/options.ts";
import { checkLeaksFile } from "../../../analysis/leaks/mod.ts";
import {
  eventLogFd,
  type EventLogSource,
  MEMSCOPE_HEADER,
  openEventLog,
  readMemscopeStart,
} from "../../../analysis/memscope_csv/mod.ts";
import {
  LEAK_COLUMNS,
  LeakRows,
  PtrKeys,
} from "../../../analysis/leaks/_leak_rows.ts";
import { LEAK_FREED_BYTES, leakScan } from "../../../ffi/bindings.ts";

const FIXTURES =
  new URL("../../../../shared/fixtures/msmemscope/", import.meta.url).pathname;
const HEADER = MEMSCOPE_HEADER.join(",");

function tempLog(text: string): string {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_native_pass_" });
  const path = `${dir}/memscope_dump.csv`;
  Deno.writeTextFileSync(path, text);
  return path;
}

/**
 * A start index past those whose windows leak_scan.c bounds: its first
 * pass then keeps every memory row, as the TypeScript pass does, and the
 * two can be compared row for row.
 */
const KEEP_EVERY_ROW = 1000;

/** Both passes over one file, as plain data. */
async function bothPasses(
  path: string,
  options: { mstxInfo: string; eventType?: string; rowBudget?: number },
) {
  const checked = {
    ...checkOptions({
      mstxInfo: options.mstxInfo,
      eventType: options.eventType,
      startIndex: KEEP_EVERY_ROW,
    }),
    ...(options.rowBudget ? { rowBudget: options.rowBudget } : {}),
  };
  using log = await openEventLog(path);
  const native = await nativeFirstPass(log, checked);
  const typescript = await firstPass(log, checked);
  // Rows as one string a column: node:assert's deepEqual takes minutes
  // over arrays of a million numbers.
  const plain = (p: typeof typescript) => {
    const r = p.rows;
    const n = r?.length ?? 0;
    const column = (a: ArrayLike<number>) =>
      Array.prototype.join.call(Array.prototype.slice.call(a, 0, n), " ");
    return {
      devices: p.devices,
      marks: p.marks,
      summary: p.summary,
      rows: r && {
        kind: column(r.kind),
        device: column(r.device),
        id: column(r.id),
        ptr: column(r.ptr),
        size: column(r.size),
        offset: column(r.offset),
        line: column(r.line),
      },
    };
  };
  return {
    native: native && plain(native),
    typescript: plain(typescript),
  };
}

const mark = (id: number, device: string | number = 0, name = '"step"') =>
  `${id},MSTX,Mark,${name},${id}000,10,11,${device},N/A,,,`;
const mem = (
  event: string,
  id: number | string,
  ptr: string,
  attr: string,
  device: string | number = 0,
  type = "HAL",
) => `${id},${event},${type},N/A,1000,10,11,${device},${ptr},${attr},,`;
/** Address `n` as msMemScope writes a Ptr: `0x` and 16 hex digits. */
const hexPtr = (n: number) => `0x${n.toString(16).padStart(16, "0")}`;

Deno.test("the native first pass of check_leaks keeps what the TypeScript pass keeps, on every fixture", async () => {
  for (const name of Deno.readDirSync(FIXTURES)) {
    for (
      const mstxInfo of [
        "step",
        "[mstx]: mstxMarkA :------training start----- ",
      ]
    ) {
      for (const eventType of ["HAL", "PTA"]) {
        const { native, typescript } = await bothPasses(
          `${FIXTURES}${name.name}`,
          { mstxInfo, eventType },
        );
        assert.ok(native, `${name.name}: the native pass fell back`);
        assert.deepEqual(native, typescript, name.name);
      }
    }
  }
});

Deno.test("the native first pass drops the memory rows no window can hold by the marks seen so far, a mark out of order included, and keeps the rows of a device without marks", async () => {
  const MB = "{size:1048576}";
  const path = tempLog([
    HEADER,
    mark(100),
    mark(200),
    mark(300),
    // From here, at start index 0: MALLOC up to 200, FREE up to 300.
    mem("MALLOC", 60, hexPtr(1), MB),
    mem("MALLOC", 250, hexPtr(2), MB), // dropped
    mem("FREE", 260, hexPtr(1), MB), // after the final C (200): hexPtr(1) leaks
    mem("MALLOC", 90, hexPtr(3), MB),
    mem("FREE", 180, hexPtr(3), MB),
    mem("FREE", 310, hexPtr(3), MB), // dropped
    mark(40), // the smallest: MALLOC up to 100, FREE up to 200 from here
    mem("MALLOC", 150, hexPtr(4), MB), // dropped
    mem("FREE", 190, hexPtr(5), MB),
    mem("MALLOC", 95, hexPtr(5), MB),
    // Host rows without marks of their own (they borrow device 0's at the
    // end): no bound, all kept.
    mem("MALLOC", 5000, hexPtr(6), MB, "cpu"),
    "",
  ].join("\n"));
  const kept = [];
  for (const startIndex of [0, 1]) {
    using log = await openEventLog(path);
    const first = await nativeFirstPass(
      log,
      checkOptions({ mstxInfo: "step", startIndex }),
    );
    kept.push(first?.rows?.length);
  }
  // At start index 1 (A 100, B 200, C 300) the FREE bound needs four
  // marks, and the MALLOC bound of three (300) drops none: all 10 kept.
  assert.deepEqual(kept, [7, 10]);
  const leaked = [];
  for (const startIndex of [0, 1]) {
    const r = await checkLeaksFile(path, { mstxInfo: "step", startIndex });
    leaked.push(r.devices.map((d) => [d.device, d.leaks.map((l) => l.id)]));
  }
  assert.deepEqual(leaked, [
    [["0", [60]], ["cpu", []]],
    [["0", [150]], ["cpu", []]],
  ]);
});

Deno.test("the native first pass reads quotes, CRLF, empty lines, stacks over lines and odd IDs as the TypeScript pass does", async () => {
  const rows = [
    HEADER,
    "",
    mark(1),
    mark(2, '"0"', '"st""ep"'),
    mark(3, 0, "step"),
    mem("MALLOC", " 4 ", "0x0000000000001000", '"{size:10,owner:a,b}"'),
    mem("MALLOC", "1_000", "0x0000000000002000", '"{x:size:,size:12}"'),
    mem('"MALLOC"', 6, "123456", "{size:99999999999999999999}"),
    mem("FREE", 7, "0x0000000000001000", "", '"1"'),
    mem("MALLOC", 8, "0x0000000000003000", "", "N/A"),
    mem("MALLOC", "x9", "0x0000000000004000", "{size:1}"),
    mem("MALLOC", 10, "0x0000000000005000", "{size:1}", 0, "PTA"),
    mem("MALLOC", 11, "0x0000000000006000", "{}"),
    `12,MALLOC,HAL,N/A,1000,10,11,0,0x0000000000007000,"{size:5}","a.py:1\nb.py:2",`,
    "\r",
    `13,OP_LAUNCH,ATEN_START,"x,y",1000,10,11,2,N/A,,,`,
    mark(14),
    "15,MSTX,Mark",
    mem("FREE", 16, "0x0000000000007000", "{size:5}"),
    mem(
      "MALLOC",
      17,
      "0x0000000000008000",
      `{size:${"0".repeat(400)}9007199254740993}`,
    ),
  ];
  for (const eol of ["\n", "\r\n"]) {
    const path = tempLog(rows.join(eol) + eol);
    const { native, typescript } = await bothPasses(path, { mstxInfo: "step" });
    assert.ok(native, "the native pass fell back");
    assert.deepEqual(native, typescript);
    const quoted = await bothPasses(path, { mstxInfo: 'st"ep' });
    assert.deepEqual(quoted.native, quoted.typescript);
  }
});

Deno.test("the native first pass finds marks named in any language as the TypeScript pass does, their bytes against the name's", async () => {
  const name = "训练步";
  const enc = new TextEncoder();
  const text = [
    HEADER,
    mark(1, 0, name),
    mark(2, 0, `"${name}"`),
    mark(3, 0, `"${name} "`),
    mem("MALLOC", 4, hexPtr(0x1000), '"{size:8}"'),
    mark(5, 0, name),
    "",
  ].join("\n");
  // A name that does not decode (a lone 0xff before the same text), and
  // the last mark.
  const path = tempLog("");
  Deno.writeFileSync(
    path,
    Uint8Array.from([
      ...enc.encode(text + '6,MSTX,Mark,"'),
      0xff,
      ...enc.encode(`${name}",6000,10,11,0,N/A,,,\n${mark(7, 0, name)}\n`),
    ]),
  );
  const { native, typescript } = await bothPasses(path, { mstxInfo: name });
  assert.ok(native, "the native pass fell back");
  assert.deepEqual(native, typescript);
  assert.deepEqual(typescript.marks, [[1, 2, 5, 7]]);
  // A name holding a quote is compared as decoded text: left to TypeScript.
  const quoted = await bothPasses(path, { mstxInfo: `训"练` });
  assert.equal(quoted.native, undefined);
});

/**
 * A log of `mib` MiB: memory rows of three devices, a stack over two lines
 * every 997th row, marks at both ends; with `stackInMiddle`, one row holds
 * a quoted stack of many lines across the file's middle.
 */
function bigLog(mib: number, stackInMiddle = false): string {
  const lines = [HEADER, mark(1), mark(2, 1)];
  let id = 3, size = 0, middle = !stackInMiddle;
  while (size < mib << 20) {
    let line = id % 997 === 0
      ? `${id},MALLOC,HAL,N/A,1000,10,11,${id % 3},0x${
        id.toString(16).padStart(16, "0")
      },"{size:${id}}","f.py:${id}\n g.py:1",`
      : mem(
        id % 5 === 0 ? "FREE" : "MALLOC",
        id,
        `0x${(id >> 1).toString(16).padStart(16, "0")}`,
        `"{allocation_id:${id},size:${id * 7}}"`,
        id % 3,
      );
    if (!middle && size > (mib << 20) / 2 - (64 << 10)) {
      middle = true;
      const stack = Array.from({ length: 4000 }, (_, i) => `f${i}.py:${i}`);
      line = `${id},MALLOC,HAL,N/A,1000,10,11,0,0x${
        id.toString(16).padStart(16, "0")
      },"{size:1}","${stack.join("\n")}",`;
    }
    lines.push(line);
    size += line.length + 1;
    id++;
  }
  lines.push(mark(id++), mark(id++, 1));
  return tempLog(lines.join("\n"));
}

Deno.test("the native first pass reads rows of call stacks longer than one of its 4 MiB reads, over two and three of them, as the TypeScript pass does", async () => {
  const stack = (mib: number) =>
    `"${
      "torch/nn/modules/module.py(1501): _call_impl\n".repeat(
        Math.ceil((mib << 20) / 46),
      )
    }"`;
  const rows = [HEADER, mark(1)];
  for (let id = 2; id < 4000; id++) {
    const ptr = `0x${(0x1000 * (id >> 1)).toString(16).padStart(16, "0")}`;
    const event = id % 2 ? "FREE" : "MALLOC";
    const big = id === 1000 ? stack(3) : id === 3000 ? stack(7.5) : "";
    rows.push(
      `${id},${event},HAL,N/A,1000,10,11,0,${ptr},"{size:${id}}",${big},`,
    );
  }
  rows.push(mark(4000));
  const path = tempLog(rows.join("\n") + "\n");
  const { native, typescript } = await bothPasses(path, { mstxInfo: "step" });
  assert.ok(native, "the native pass fell back");
  assert.deepEqual(native, typescript);
});

Deno.test("the native first pass frames rows across its reads and its two halves, and stops keeping rows at the budget as the TypeScript pass does", async () => {
  // 9 MiB: one thread, rows cut by its 4 MiB reads; 34 MiB: two threads,
  // one from each half, and a stack of many lines across the middle that
  // the second thread, starting inside it, cannot frame.
  for (const [mib, stack] of [[9, false], [34, false], [34, true]] as const) {
    const path = bigLog(mib, stack);
    const whole = await bothPasses(path, { mstxInfo: "step" });
    assert.ok(whole.native, "the native pass fell back");
    assert.deepEqual(whole.native, whole.typescript, `${mib} MiB`);
    for (const rowBudget of [5000, 200_000]) {
      const capped = await bothPasses(path, { mstxInfo: "step", rowBudget });
      if (rowBudget === 5000) assert.equal(capped.native?.rows, undefined);
      assert.deepEqual(capped.native, capped.typescript);
    }
    Deno.removeSync(path);
  }
});

Deno.test("the native first pass says whether its rows' IDs are written as their numbers, in either half of a large log", async () => {
  // 34 MiB: two threads; an ID with a leading zero in the second half.
  const path = bigLog(34);
  const text = Deno.readTextFileSync(path);
  const last = text.lastIndexOf("\n", text.length - 200);
  const oddAtEnd = text.slice(0, last + 1) +
    mem("MALLOC", "0777", "0x0000000000abc000", '"{size:8}"') +
    text.slice(last);
  const checked = checkOptions({ mstxInfo: "step", startIndex: 0 });
  for (const [body, plain] of [[text, true], [oddAtEnd, false]] as const) {
    Deno.writeTextFileSync(path, body);
    using log = await openEventLog(path);
    const first = (await nativeFirstPass(log, checked))!;
    assert.ok(first.rows, "the native pass kept no rows");
    assert.equal(first.rows.textsFromValues, plain);
  }
  Deno.removeSync(path);
});

Deno.test("the native first pass reads a log with call stacks in two halves: the second starts at a row, not at the first newline past the middle", async () => {
  // IDs as msMemScope writes them, and quoted.
  for (const q of ["", '"']) await callStacksInHalves(q);
});

async function callStacksInHalves(q: string): Promise<void> {
  // Every row's stacks hold more newlines than the rows do: the first
  // newline past the middle is inside a quoted stack, nearly always.
  const stack = (lang: string) =>
    `"${
      Array.from({ length: 6 }, (_, i) => `${lang}/frame_${i}.py(${i}): f`)
        .join("\n")
    }"`;
  const lines = [HEADER, mark(1), mark(2), mark(3)];
  let size = 0;
  for (let id = 4; size < 34 << 20; id++) {
    const row = `${q}${id}${q},${
      id % 2 ? "MALLOC" : "FREE"
    },HAL,N/A,1000,10,11,0,0x${
      (id >> 1).toString(16).padStart(16, "0")
    },"{size:${id}}",${stack("py")},${stack("c")}`;
    lines.push(row);
    size += row.length + 1;
  }
  // Made sure of: a mark moves the middle until the first newline past it
  // is inside a stack.
  let text = lines.join("\n") + "\n";
  const insideAfterMiddle = () => {
    const first = HEADER.length + 1;
    const nl = text.indexOf("\n", first + ((text.length - first) >> 1));
    return text.slice(0, nl).split('"').length % 2 === 0;
  };
  while (!insideAfterMiddle()) {
    lines.splice(1, 0, mark(1));
    text = lines.join("\n") + "\n";
  }
  const path = tempLog(text);
  const whole = await bothPasses(path, { mstxInfo: "step" });
  assert.ok(whole.native, "the native pass fell back");
  assert.deepEqual(whole.native, whole.typescript);
  using log = await openEventLog(path);
  const start = (await readMemscopeStart(log, { columns: LEAK_COLUMNS }))!;
  // Room for a second half, as check-leaks makes it.
  const rows = new LeakRows(1 << 20, 1 << 20, { halves: true });
  const markId = new Float64Array(16), markDevice = new Uint32Array(16);
  const scan = await leakScan({
    fd: eventLogFd(log.file)!,
    columns: [0, 1, 2, 3, 7, 8, 9].map((k) => start.columns.at[k]),
    offset: start.offset,
    line: start.line,
    rows,
    budget: 1 << 20,
    markDevice,
    markId,
    eventType: "HAL",
    mstxInfo: "step",
    startIndex: 0,
    halfAt: rows.halfAt,
  });
  assert.equal(scan.halves, 2, `one thread read the whole log (IDs ${q}1${q})`);
  Deno.removeSync(path);
}

Deno.test("the native first pass keys a Ptr written as Python's hex() writes it by its value, apart from the same value in 16 digits or decimal, as the TypeScript pass does", async () => {
  const rows = [HEADER, mark(1), mark(5), mark(9)];
  for (
    const ptr of [
      "0x1000",
      "0x0000000000001000",
      "4096",
      "0x0",
      "0xfffffffffffff",
    ]
  ) {
    rows.push(mem("MALLOC", 2, ptr, "{size:1}"), mem("FREE", 3, ptr, "{}"));
  }
  const path = tempLog(rows.join("\n") + "\n");
  const { native, typescript } = await bothPasses(path, { mstxInfo: "step" });
  assert.ok(native, "the native pass fell back");
  assert.deepEqual(native, typescript);
  assert.equal(
    new Set(native.rows?.ptr.split(" ")).size,
    5,
    native.rows?.ptr,
  );
});

Deno.test("the native first pass keys a Ptr written after 0X or in capitals by its value and spelling, apart from every other spelling of that value, as the TypeScript pass does", async () => {
  const rows = [HEADER, mark(1), mark(50), mark(99)];
  // Each value in the eight spellings: 0x or 0X, 16 digits or as few as
  // the value needs, letters small or capital (a value without letters
  // has one text in either case).
  const values = [0xa1000, 0x1000, 0, 2 ** 50 - 1];
  const spellings = (v: number) => {
    const short = v.toString(16), long = short.padStart(16, "0");
    return ["0x", "0X"].flatMap((x) =>
      [short, long].flatMap((d) => [x + d, x + d.toUpperCase()])
    );
  };
  let id = 2;
  for (const v of values) {
    for (const ptr of spellings(v)) {
      rows.push(mem("MALLOC", id++, ptr, "{size:1}"));
      rows.push(mem("FREE", id++, ptr, "{}"));
    }
  }
  const path = tempLog(rows.join("\n") + "\n");
  const { native, typescript } = await bothPasses(path, { mstxInfo: "step" });
  assert.ok(native, "the native pass fell back");
  assert.deepEqual(native, typescript);
  // One key a text, which it spells back (leaks print from the arrays).
  const keys = native.rows!.ptr.split(" ").map(Number);
  const written = values.flatMap(spellings);
  keys.forEach((key, i) =>
    assert.equal(PtrKeys.text(key), written[i >> 1], String(key))
  );
  const distinct = (list: unknown[]) => new Set(list).size;
  assert.equal(distinct(keys), distinct(written));
});

Deno.test("the native first pass reads a log with columns added before those it reads, its Attr as the 24th, as the TypeScript pass does", async () => {
  const extra = Array.from({ length: 14 }, (_, i) => `Extra ${i}`);
  const header = HEADER.replace("Thread Id,", `Thread Id,${extra.join(",")},`);
  // Thread Id is the 7th field of every row these make.
  const widen = (row: string) =>
    row.replace(/^((?:[^,]*,){7})/, `$1${"0,".repeat(extra.length)}`);
  const rows = [mark(1), mark(5), mark(9)];
  for (let id = 2; id < 9; id += 2) {
    const ptr = hexPtr(id * 4096);
    rows.push(
      mem("MALLOC", id, ptr, "{size:1}"),
      mem("FREE", id + 1, ptr, "{}"),
    );
  }
  const path = tempLog([header, ...rows.map(widen)].join("\n") + "\n");
  const { native, typescript } = await bothPasses(path, { mstxInfo: "step" });
  assert.ok(native, "the native pass fell back");
  assert.deepEqual(native, typescript);
  assert.equal(native.rows?.size, "1 0 1 0 1 0 1 0");
});

Deno.test("the native first pass keys an empty Ptr and N/A, quoted or not, each as one text, as the TypeScript pass does", async () => {
  const log = (ptrs: string[]) => {
    const rows = [HEADER, mark(1), mark(50), mark(99)];
    ptrs.forEach((ptr, i) => {
      rows.push(mem("MALLOC", 2 * i + 2, ptr, "{size:1}"));
      rows.push(mem("FREE", 2 * i + 3, ptr, "{}"));
    });
    return tempLog(rows.join("\n") + "\n");
  };
  const ptrs = ["N/A", '"N/A"', "", '""', "0x0"];
  const { native, typescript } = await bothPasses(log(ptrs), {
    mstxInfo: "step",
  });
  assert.ok(native, "the native pass fell back");
  assert.deepEqual(native, typescript);
  const keys = native.rows!.ptr.split(" ").map(Number);
  assert.deepEqual(
    keys.map((k) => PtrKeys.text(k)),
    ["N/A", "N/A", "N/A", "N/A", "", "", "", "", "0x0", "0x0"],
  );
  // Any other text is its own, which only the TypeScript pass keys.
  for (const other of ["N/A ", "n/a", " "]) {
    const { native } = await bothPasses(log([other]), { mstxInfo: "step" });
    assert.equal(native, undefined, other);
  }
});

Deno.test("the native first pass reads IDs, Ptrs, Device Ids and event types of every length round its eight-byte steps as the TypeScript pass does", async () => {
  // leak_scan.c reads up to 8 digits of an ID or a size, 8 hex digits of a
  // Ptr and 8 bytes of a Device Id or Event Type at once: lengths either
  // side of 8, bytes next to the digits' ranges, texts that share a prefix.
  const rows = [HEADER, mark(1), mark(2, "npu:1"), mark(3, "npu:10")];
  const ids = ["7", "42", "1234567", "12345678", "123456789", "00000042"];
  ids.push("123456789012345", "1234567890123456", "1234:678", "12/45678");
  ids.push("99999999", "9999999999999999");
  const hex = ["0000124100000000", "00001240c0000000", "001fffffffffffff"];
  hex.push("0000000900000000", "00000000a0f00009");
  const devices = ["0", "npu:1", "npu:10", "npu:1000", "npu:1001", "npu:100"];
  devices.push("1", "apu:10", "npu:1000x", "npu:1000y");
  let n = 0;
  for (const id of ids) {
    for (const h of hex) {
      const device = devices[n++ % devices.length];
      const size = ["1", "12345678", "123456789", "00000009"][n % 4];
      rows.push(mem("MALLOC", id, `0x${h}`, `{size:${size}}`, device));
      rows.push(mem("FREE", id, `0x${h}`, "{}", device));
    }
  }
  const types = ["HA", "HALX", "XAL", "MINDSPORE", "MINDSPOR", "HAL", "HOST"];
  for (const type of [...types, "HOST_PINNED", "HOST_PINNE", "HOSTX"]) {
    rows.push(mem("MALLOC", 5, "0x0000000000001000", "{size:2}", 0, type));
  }
  rows.push(mark(60), mark(61, "npu:1"), mark(62, "npu:10"));
  const path = tempLog(rows.join("\n") + "\n");
  for (const eventType of ["HAL", "MINDSPORE", "HOST", "HOST_PINNED"]) {
    const { native, typescript } = await bothPasses(path, {
      mstxInfo: "step",
      eventType,
    });
    assert.ok(native, "the native pass fell back");
    assert.deepEqual(native, typescript);
  }
  // Not 16 hex digits of one case below 2^53 (2^50 in capitals): keyed by
  // text, so natively not at all (_leak_rows.ts PtrKeys says why).
  const odd = ["0020000000000000", "00001240Cabc0000", "00001240g0000000"];
  odd.push("000400000000000A");
  odd.push("0000:24100000000", "0000`24100000000", "ffffffff/fffffff");
  for (const h of odd) {
    const path = tempLog(
      [HEADER, mark(1), mem("MALLOC", 2, `0x${h}`, "{size:1}")].join("\n"),
    );
    const { native } = await bothPasses(path, { mstxInfo: "step" });
    assert.equal(native, undefined, h);
  }
});

Deno.test("the native first pass reads a log of rows shorter than its first try has room for again, with room for all", async () => {
  // 25-byte memory rows, every one kept: over twice the rows of a row
  // every 64 bytes.
  const rows = [HEADER, mark(1), mark(2), mark(3)];
  for (let id = 4; id < 4000; id += 2) {
    const ptr = `0x${id.toString(16)}`;
    rows.push(
      `${id},MALLOC,HAL,,,,,0,${ptr},size:1`,
      `${id + 1},FREE,HAL,,,,,0,${ptr},`,
    );
  }
  const path = tempLog(rows.join("\n") + "\n");
  const { native, typescript } = await bothPasses(path, { mstxInfo: "step" });
  assert.ok(native, "the native pass fell back");
  assert.deepEqual(native, typescript);
  assert.ok(native.summary.bytes / 3996 < 32, String(native.summary.bytes));
});

Deno.test("the native first pass reads a log with more marks than its first try has room for again, with room for all", async () => {
  // _native_scan.ts MARK_ROOM is 65,536, more than a mark a KiB of this
  // 6 MB log: 70,000 marks pass it.
  const rows = [HEADER];
  for (let id = 1; id <= 140_000; id += 2) {
    rows.push(mark(id, id % 3));
    rows.push(
      mem(
        "MALLOC",
        id + 1,
        `0x${id.toString(16).padStart(16, "0")}`,
        "{size:8}",
        id % 3,
      ),
    );
  }
  const path = tempLog(rows.join("\n") + "\n");
  const { native, typescript } = await bothPasses(path, { mstxInfo: "step" });
  assert.ok(native, "the native pass fell back");
  assert.equal(native.marks.flat().length, 70_000);
  assert.deepEqual(native, typescript);
  const leaks = await checkLeaksFile(path, { mstxInfo: "step", startIndex: 5 });
  assert.equal(leaks.passes, 1);
  assert.equal(leaks.leakCount, 3, "one a device, the block after its mark A");
});

Deno.test("the native first pass leaves to the TypeScript pass what it cannot read for certain", async () => {
  const cases = [
    // A Ptr in no spelling keyed by value is keyed by its text: a leading
    // zero, 14 digits, letters of both cases, capitals past 2^50.
    [HEADER, mark(1), mem("MALLOC", 2, "0X01000", "{size:1}")],
    [HEADER, mark(1), mem("MALLOC", 2, "0x01000", "{size:1}")],
    [HEADER, mark(1), mem("MALLOC", 2, "0x10000000000000", "{size:1}")],
    [HEADER, mark(1), mem("MALLOC", 2, "0x7f3A", "{size:1}")],
    [HEADER, mark(1), mem("MALLOC", 2, "0x000400000000000A", "{size:1}")],
    [HEADER, mark(1), mem("MALLOC", 2, "0X4000000000000", "{size:1}")],
    // A row cut short of its Ptr.
    [HEADER, mark(1), "2,MALLOC,HAL"],
    // The same Device Id bytes, unquoted and then quoted: two devices.
    [HEADER, mark(1, 'a""b'), mark(2, '"a""b"')],
    // A Device Id that is not ASCII.
    [HEADER, mark(1, "gerät")],
  ];
  for (const rows of cases) {
    const path = tempLog(rows.join("\n") + "\n");
    const { native } = await bothPasses(path, { mstxInfo: "step" });
    assert.equal(native, undefined);
  }
});

Deno.test("the native pass over the windows reads a log as far as the first pass read it, however it grew since", async () => {
  const rows = [mark(10), mark(20), mark(30)];
  for (let id = 11; id < 20; id++) {
    rows.push(mem("MALLOC", id, hexPtr(0x1000 * id), '"{size:64}"'));
  }
  const path = tempLog([HEADER, ...rows, ""].join("\n"));
  const checked = checkOptions({ mstxInfo: "step" });
  using log = await openEventLog(path);
  const first = (await nativeFirstPass(log, checked))!;
  assert.equal(first.rows?.length, 9);
  // Rows of the window written after the first pass.
  Deno.writeTextFileSync(
    path,
    [15, 16, 17].map((id) =>
      mem("MALLOC", id, hexPtr(0x9000 * id), '"{size:1}"')
    )
      .join("\n") + "\n",
    { append: true },
  );
  const windows = new Map([[0, { a: 10, b: 20, c: 30 }]]);
  const again = await nativeWindowPass(log, checked, { first, windows });
  assert.ok(again !== undefined);
  assert.equal(again.length, 9);
  assert.deepEqual([...again.id.subarray(0, 9)], [
    11,
    12,
    13,
    14,
    15,
    16,
    17,
    18,
    19,
  ]);
});

Deno.test("a replay as read of a log still being written takes its last row as the first pass saw it, half written: the same leaks as the log then", async () => {
  // A block at 0xaaa0000 never freed, 3,000 blocks freed at once, a FREE
  // at 0xccc0000, the marks, then a MALLOC far back (the horizon is wide)
  // and a last row cut at "9,MAL": finished, it is a MALLOC inside the
  // window never freed, a leak the first pass never saw (nor its ID).
  const rows = [mark(1), mem("MALLOC", 7, hexPtr(0xaaa0000), '"{size:64}"')];
  let id = 10;
  for (let n = 1; n <= 3000; n++, id += 2) {
    rows.push(mem("MALLOC", id, hexPtr(0x1000 * n), '"{size:64}"'));
    rows.push(mem("FREE", id + 1, hexPtr(0x1000 * n), '"{size:64}"'));
  }
  rows.push(mem("FREE", 5001, hexPtr(0xccc0000), '"{size:64}"'));
  const b = id++, c = id++;
  rows.push(
    mark(b),
    mark(c),
    mem("MALLOC", 2, hexPtr(0xbbb0000), '"{size:64}"'),
  );
  const last = mem("MALLOC", 9, hexPtr(0xddd0000), '"{size:64}"') + "\n";
  const text = [HEADER, ...rows, ""].join("\n") + last.slice(0, 5);
  const path = tempLog(text);
  const options = { mstxInfo: "step", rowBudget: 400, maxLeaks: 100 };
  const checked = checkOptions(options);
  using log = await openEventLog(path);
  const first = (await nativeFirstPass(log, checked))!;
  Deno.writeTextFileSync(path, last.slice(5), { append: true });
  const found = new FoundLeaks(Int32Array.from([0]), checked.maxLeaks);
  const windows = new Map([[0, { a: 1, b, c }]]);
  const stream = await nativeStream(log, checked, {
    first,
    windows,
    resume: first.resume,
    found,
  });
  assert.ok(stream.complete);
  // The log as the first pass read it, in memory.
  const then = await checkLeaksFile(tempLog(text), {
    ...options,
    rowBudget: Infinity,
  });
  const listed = found.listed();
  assert.deepEqual(
    [...listed.id.subarray(0, listed.length)],
    then.devices[0].leaks.map((l) => Number(l.id)),
  );
});

Deno.test("a replay as read of a log cut after the first pass says the log got shorter, not what its cut last row looks like", async () => {
  // Cut inside the MALLOC of ID 2 after the first pass: read as it stands,
  // that row had no device and made a device "" with no marks.
  const rows = [mark(1)];
  let id = 10;
  for (let n = 1; n <= 3000; n++, id += 2) {
    rows.push(mem("MALLOC", id, hexPtr(0x1000 * n), '"{size:64}"'));
    rows.push(mem("FREE", id + 1, hexPtr(0x1000 * n), '"{size:64}"'));
  }
  const b = id++, c = id++;
  rows.push(
    mark(b),
    mark(c),
    mem("MALLOC", 2, hexPtr(0xbbb0000), '"{size:64}"'),
  );
  const text = [HEADER, ...rows, ""].join("\n");
  const path = tempLog(text);
  const checked = checkOptions({ mstxInfo: "step", rowBudget: 400 });
  using log = await openEventLog(path);
  const first = (await nativeFirstPass(log, checked))!;
  Deno.truncateSync(path, text.length - 30);
  const found = new FoundLeaks(Int32Array.from([0]), checked.maxLeaks);
  await assert.rejects(
    nativeStream(log, checked, {
      first,
      windows: new Map([[0, { a: 1, b, c }]]),
      resume: first.resume,
      found,
    }),
    /got shorter while it was read/,
  );
});

Deno.test("the native pass over the windows of a large log splits what the first pass read, not what the log grew to since", async () => {
  const path = bigLog(34);
  const checked = checkOptions({ mstxInfo: "step" });
  using log = await openEventLog(path);
  const first = (await nativeFirstPass(log, checked))!;
  const windows = new Map([[0, { a: 0, b: 1e15, c: 1e15 }]]);
  const ids = async () => {
    const rows = await nativeWindowPass(log, checked, { first, windows });
    assert.ok(rows !== undefined);
    return Array.from(rows.id.subarray(0, rows.length));
  };
  const before = await ids();
  assert.ok(before.length > 1000);
  // Three times as much again, all of it inside the window: the middle
  // of the file is now past where the first pass stopped.
  const more = Array.from(
    { length: 20_000 },
    (_, i) => mem("MALLOC", 1e9 + i, "0x0000000000abc000", '"{size:8}"'),
  ).join("\n") + "\n";
  const file = Deno.openSync(path, { append: true });
  for (let n = 0; n < 100 << 20; n += more.length) {
    file.writeSync(new TextEncoder().encode(more));
  }
  file.close();
  assert.deepEqual(await ids(), before);
  Deno.removeSync(path);
});

Deno.test("the native first pass joins of its second half only the rows inside the windows the whole file's marks give", async () => {
  // Device 0's window, A B C = 10 20 30, in the first rows; 34 MiB of rows
  // past it after, which the second thread reads without those marks.
  const lines = [HEADER, mark(10), mark(20), mark(30)];
  for (let id = 11; id < 30; id++) {
    if (id !== 20) {
      lines.push(
        mem(id < 20 ? "MALLOC" : "FREE", id, hexPtr(id), '"{size:8}"'),
      );
    }
  }
  let size = 0;
  for (let id = 31; size < 34 << 20; id++) {
    const row = mem(id % 2 ? "MALLOC" : "FREE", id, hexPtr(id), '"{size:8}"');
    lines.push(row);
    size += row.length + 1;
  }
  const path = tempLog(lines.join("\n") + "\n");
  using log = await openEventLog(path);
  const first = (await nativeFirstPass(
    log,
    checkOptions({ mstxInfo: "step", startIndex: 0 }),
  ))!;
  const rows = first.rows!;
  assert.equal(rows.length, 18);
  assert.deepEqual(
    Array.from(rows.id.subarray(0, rows.length)),
    [11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 23, 24, 25, 26, 27, 28, 29],
  );
  Deno.removeSync(path);
});

Deno.test("the native first pass tells 250 interleaved devices apart as the TypeScript pass does, names that begin others' included, numbers with leading zeros too, in either half", async () => {
  // leak_scan.c finds a number below 1000 by its value, any other name by
  // its hash: "1", "10" and "100" are three devices, "0", "00" and "000"
  // three more (the analyser compares the text), "1000" and "007" others,
  // "host" and "cpu" two more, N/A none; each row's device differs from
  // the last one's, so no row is answered by the last name.
  const names = [
    ...Array.from({ length: 243 }, (_, k) => String(k)),
    "00",
    "000",
    "01",
    "007",
    "1000",
    "host",
    "cpu",
  ];
  const lines = [HEADER];
  let id = 1;
  for (const name of names) lines.push(mark(id++, name));
  // Past 32 MiB: the second half is read by a thread of its own.
  for (let round = 0; lines.length < 560_000; round++) {
    for (const [k, name] of names.entries()) {
      const at = hexPtr(0x1000 * (round * names.length + k + 1));
      const event = round % 2 ? "FREE" : "MALLOC";
      lines.push(mem(event, id++, at, '"{size:64}"', name));
      if (k % 50 === 0) lines.push(mem("FREE", id++, at, '"{size:0}"', "N/A"));
    }
  }
  for (const name of names) lines.push(mark(id++, name), mark(id++, name));
  const path = tempLog(lines.join("\n") + "\n");
  const { native, typescript } = await bothPasses(path, { mstxInfo: "step" });
  assert.ok(native, "the native pass fell back");
  assert.ok(native.summary.bytes > 32 << 20);
  assert.equal(native.devices.length, 250);
  assert.deepEqual(native, typescript);
  Deno.removeSync(path);
});

Deno.test("the second half of a large log drops rows past the first half's bounds of the same device only, matched by its whole name", async () => {
  // Device 10's window closes in the first rows; device 1's is open to the
  // log's end, where its C comes. The second thread reads device 1's FREEs
  // with device 10's bounds at hand, and must not take them for device 1's
  // ("1" begins "10").
  // Device 10 comes first, so that a match by prefix would find it first.
  const lines = [HEADER, mark(10, 10), mark(20, 10), mark(30, 10)];
  lines.push(mark(10, 1), mark(20, 1));
  for (let id = 11; id < 20; id++) {
    lines.push(mem("MALLOC", id, hexPtr(0x1000 * id), '"{size:8}"', 1));
  }
  let id = 31, size = 0;
  for (; size < 34 << 20; id++) {
    // Device 1 now and then, so that the second thread knows it early.
    const row = mem("FREE", id, hexPtr(id), '"{size:8}"', id % 1000 ? 10 : 1);
    lines.push(row);
    size += row.length + 1;
  }
  // In the second half: device 1 frees all but its block of ID 19.
  for (let m = 11; m < 19; m++) {
    lines.push(mem("FREE", id++, hexPtr(0x1000 * m), '"{size:8}"', 1));
  }
  lines.push(mark(id, 1));
  const path = tempLog(lines.join("\n") + "\n");
  const r = await checkLeaksFile(path, { mstxInfo: "step" });
  assert.deepEqual(
    r.devices.map((d) => [d.device, d.leaks.map((l) => l.id)]),
    [["10", []], ["1", [19]]],
  );
  Deno.removeSync(path);
});

/**
 * Two devices' rows, each with hundreds of blocks pending at once at B:
 * MALLOCs at 400 addresses (several blocks at one, at times), FREEs of a
 * held address in any order (one in ten of one not held), one MALLOC in 25
 * taking the ID of one of the last 50 at another address, more FREEs
 * between B and C, each row swapped with one up to 31 rows on. With
 * `unfreed`, that many MALLOCs in 100 are at addresses of their own that
 * no FREE names.
 */
function manyPending(random: (n: number) => number, unfreed = 0): string[] {
  const ptr = () => hexPtr(0x1000 * (1 + random(400)));
  const rows: string[][] = [[], []];
  for (const device of [0, 1]) {
    const out = rows[device], held: string[] = [];
    let id = 1;
    const size = () => `"{size:${1 + random(1 << 20)}}"`;
    const freeOne = () => {
      const at = held.length && random(10)
        ? held.splice(random(held.length), 1)[0]
        : ptr();
      out.push(mem("FREE", id++, at, '"{size:0}"', device));
    };
    out.push(mark(id++, device));
    for (let n = 0; n < 3000; n++) {
      const roll = random(100);
      if (roll < 35) freeOne();
      else {
        const never = roll >= 100 - unfreed;
        const at = never ? hexPtr(0x1000 * (1000 + id)) : ptr();
        const taken = (roll < 39 || (never && roll % 5 === 0)) && id > 60;
        if (!never) held.push(at);
        out.push(
          mem("MALLOC", taken ? id - 1 - random(50) : id, at, size(), device),
        );
        id++;
      }
    }
    out.push(mark(id++, device));
    for (let n = 0; n < 300; n++) freeOne();
    out.push(mark(id++, device));
  }
  const mixed = rows[0].flatMap((r, i) => [r, rows[1][i]]).filter((r) => r);
  return jostled(mixed, random);
}

/**
 * The native first pass over `file` at `options`, each device's first
 * window, and one replay of them as the rows are read, from the start.
 */
async function firstThenStream(
  file: EventLogSource,
  options: CheckLeaksOptions,
) {
  const checked = checkOptions(options);
  const first = (await nativeFirstPass(file, checked))!;
  const windows = new Map(
    first.marks.map((m, k) => [k, { a: m[0], b: m[1], c: m[2] }]),
  );
  const one = await nativeStreamPass(file, checked, { first, windows });
  return { checked, first, windows, one };
}

Deno.test("the native replay as the rows are read, split into parts at its room when more blocks are pending than it has room for, finds the leaks the replay in memory finds", async () => {
  const random = seeded(11);
  for (let log = 0; log < 6; log++) {
    const path = tempLog([HEADER, ...manyPending(random), ""].join("\n"));
    const options = { mstxInfo: "step", rowBudget: 400, maxLeaks: 100_000 };
    using file = await openEventLog(path);
    // One replay, room for 201 blocks, splits its part there, and again.
    const { checked, first, windows, one } = await firstThenStream(
      file,
      options,
    );
    assert.ok(typeof one === "object" && one.parts >= 4, `log ${log}`);
    // The other parts, a read each (some split in their turn).
    const found = new FoundLeaks(Int32Array.from(first.devices.keys()), 1e5);
    const { reads, complete } = await nativeStream(file, checked, {
      first,
      windows,
      found,
    });
    assert.ok(complete && reads >= one.parts, `log ${log}: ${reads} reads`);
    const inMemory = await checkLeaksFile(path, {
      ...options,
      rowBudget: Infinity,
    });
    const listed = found.listed();
    const ids = (k: number) =>
      Array.from(listed.id.subarray(0, listed.length)).filter((_, i) =>
        listed.device[i] === k
      );
    for (const [k, d] of inMemory.devices.entries()) {
      assert.ok(d.leaks.length > 50, `log ${log}: ${d.leaks.length} leaks`);
      assert.deepEqual(ids(k), d.leaks.map((l) => l.id), `log ${log}`);
      assert.equal(found.bytes[k], d.leakedBytes, `log ${log}`);
    }
    // And the whole command, from its first pass on.
    assert.deepEqual(
      { ...await checkLeaksFile(path, options), passes: 0 },
      { ...inMemory, passes: 0 },
      `log ${log}`,
    );
  }
});

Deno.test("a replay reading on from the rows the first pass kept splits its part where those alone leave more blocks pending than its room, and the other parts find the rest of their leaks", async () => {
  // 400 blocks allocated first (a budget of 400 rows: room for 201), 200 of
  // them freed at the end, between B and C. Device 1 frees the other 200
  // addresses after that: a Ptr no FREE names holds no block, and the
  // Ptrs freed are told apart by address alone.
  const ptr = (n: number) => hexPtr(0x1000 * n);
  const rows = [mark(1)];
  for (let id = 2; id < 402; id++) {
    rows.push(mem("MALLOC", id, ptr(id), '"{size:64}"'));
  }
  rows.push(mark(402));
  for (let id = 403; id < 603; id++) {
    rows.push(mem("FREE", id, ptr(id - 401), '"{size:64}"'));
  }
  rows.push(mark(603));
  for (let n = 202; n < 402; n++) {
    rows.push(mem("FREE", 400 + n, ptr(n), '"{size:64}"', 1));
  }
  const path = tempLog([HEADER, ...rows, ""].join("\n"));
  const options = { mstxInfo: "step", rowBudget: 400 };
  const checked = checkOptions(options);
  using file = await openEventLog(path);
  const first = (await nativeFirstPass(file, checked))!;
  assert.ok(first.resume !== undefined);
  const windows = new Map([[0, { a: 1, b: 402, c: 603 }]]);
  const kept = await nativeStreamPass(file, checked, {
    first,
    windows,
    resume: first.resume,
  });
  assert.ok(typeof kept === "object" && kept.parts >= 2);
  const r = await checkLeaksFile(path, options);
  assert.equal(r.leakCount, 200);
  // The first pass, the replay reading on, and a read for each part it left.
  assert.equal(r.passes, 1 + kept.parts);
  assert.deepEqual(r.devices[0].leaks.slice(0, 2).map((l) => l.id), [202, 203]);
});

Deno.test("a replay as the rows are read that one Ptr alone fills to half its room is not run again in more parts, which would each hold that Ptr's blocks", async () => {
  // 600 blocks pending at 0x0 and 500 freed at addresses of their own (a
  // budget of 1000 rows: room for 501 blocks). 0x0 is freed before the
  // window, so its blocks are held (a Ptr never freed holds none).
  const rows = [mem("FREE", 0, hexPtr(0), '"{size:64}"'), mark(1)];
  for (let id = 2; id < 1702; id += 3) {
    rows.push(mem("MALLOC", id, hexPtr(0), '"{size:64}"'));
    if (id > 1500) continue;
    rows.push(mem("MALLOC", id + 1, hexPtr(0x1000 * id), '"{size:64}"'));
    rows.push(mem("FREE", id + 2, hexPtr(0x1000 * id), '"{size:64}"'));
  }
  rows.push(mark(1702), mark(1703));
  const path = tempLog([HEADER, ...rows, ""].join("\n"));
  const options = { mstxInfo: "step", rowBudget: 1000 };
  const checked = checkOptions(options);
  using file = await openEventLog(path);
  const first = (await nativeFirstPass(file, checked))!;
  assert.equal(first.rows, undefined);
  const windows = new Map([[0, { a: 1, b: 1702, c: 1703 }]]);
  assert.equal(
    await nativeStreamPass(file, checked, { first, windows }),
    undefined,
  );
  const r = await checkLeaksFile(path, options);
  assert.equal(r.leakCount, 567);
  // The first pass, the replay reading on, the rows inside the window, one
  // part, then the TypeScript passes (a few): not 2 + 4 + ... + 64 parts.
  assert.ok(r.passes <= 16, `${r.passes} passes`);
  assert.deepEqual(
    { ...r, passes: 0 },
    {
      ...await checkLeaksFile(path, { ...options, rowBudget: Infinity }),
      passes: 0,
    },
  );
});

/**
 * `rows` (a mark first) and two marks from `id` on, one window, checked
 * at `rowBudget`: the parts the native replay reading on from the first
 * pass ended in, and the leaks check-leaks found, which must be what the
 * replay in memory finds.
 */
async function oneWindowAtBudget(
  rows: string[],
  id: number,
  rowBudget: number,
  maxLeaks?: number,
): Promise<
  {
    parts?: number;
    leakCount: number;
    passes: number;
    bytes: number;
    fromStart: number;
  }
> {
  const path = tempLog(
    [HEADER, ...rows, mark(id), mark(id + 1), ""].join("\n"),
  );
  const options = { mstxInfo: "step", rowBudget, maxLeaks };
  const checked = checkOptions(options);
  using file = await openEventLog(path);
  const first = (await nativeFirstPass(file, checked))!;
  const windows = new Map([[0, { a: 1, b: id, c: id + 1 }]]);
  const one = await nativeStreamPass(file, checked, { first, windows });
  // Every part read from the start, as parts after the first are.
  const found = new FoundLeaks(Int32Array.from([0]), checked.maxLeaks);
  const { complete } = await nativeStream(file, checked, {
    first,
    windows,
    found,
  });
  const r = await checkLeaksFile(path, options);
  assert.deepEqual(
    { ...r, passes: 0 },
    {
      ...await checkLeaksFile(path, { ...options, rowBudget: Infinity }),
      passes: 0,
    },
  );
  Deno.removeSync(path);
  return {
    parts: typeof one === "object" ? one.parts : undefined,
    leakCount: r.leakCount,
    passes: r.passes,
    bytes: r.bytes,
    fromStart: complete ? found.counts[0] : NaN,
  };
}

/**
 * A mark at ID 1, then `count` blocks at addresses of their own, their
 * MALLOCs `step` IDs apart from `from` on, each freed at once (the next
 * ID) but every `held`th from the first (none when 0); `id`: the ID after
 * them.
 */
function freedAtOnce(
  count: number,
  { from, step, held = 0 }: { from: number; step: number; held?: number },
): { rows: string[]; id: number } {
  const rows = [mark(1)];
  for (let n = 0; n < count; n++) {
    const at = hexPtr(0x1000 * (n + 1)), id = from + n * step;
    rows.push(mem("MALLOC", id, at, '"{size:64}"'));
    if (!held || n % held) rows.push(mem("FREE", id + 1, at, '"{size:64}"'));
  }
  return { rows, id: from + count * step };
}

/** 5,000 blocks, every 50th held: 100 pending at most. */
const mostFreedAtOnce = () => freedAtOnce(5000, { from: 2, step: 2, held: 50 });

Deno.test("a replay whose remembered FREEs pass its room splits its part there too, and finds the leaks the replay in memory finds", async () => {
  // The first block's MALLOC comes last, about 10,000 IDs behind the largest
  // before it: every FREE is remembered then (a MALLOC still to come may
  // have a smaller ID), 4,900 of them, where a budget of 400 rows gives
  // room for 201 blocks and 165 FREEs (slots are counted at a rebuild: the
  // first at 3,072).
  const { rows, id } = mostFreedAtOnce();
  const firstLast = [rows[0], ...rows.slice(2), rows[1]];
  const { parts, leakCount } = await oneWindowAtBudget(firstLast, id, 400);
  assert.ok(parts !== undefined && parts >= 2);
  assert.equal(leakCount, 100);
});

Deno.test("a replay remembers FREEs only as far back as the first pass saw MALLOCs come behind the largest ID before them: MALLOCs in ID order, or at most 20 IDs back, are replayed in one part", async () => {
  // As above, but the MALLOCs come in ID order: no MALLOC still to come
  // has a smaller ID than a FREE read, and none is remembered. Then with
  // each ten blocks' rows in reverse: a MALLOC up to 18 IDs back.
  const { rows, id } = mostFreedAtOnce();
  const backwards: string[] = [rows[0]];
  const blocks = rows.slice(1).join("\n").split(/\n(?=\d+,MALLOC)/);
  for (let n = 0; n < blocks.length; n += 10) {
    backwards.push(...blocks.slice(n, n + 10).reverse());
  }
  for (const inFile of [rows, backwards]) {
    const { parts, leakCount } = await oneWindowAtBudget(inFile, id, 400);
    assert.equal(parts, 1);
    assert.equal(leakCount, 100);
  }
});

Deno.test("a replay as the rows are read takes a MALLOC more than 65,536 IDs behind the largest before it, where the first pass saw MALLOCs come that far", async () => {
  // 200 blocks 1,000 IDs apart, every 10th held, then one held 70,000 IDs
  // back: about 70 FREEs remembered at a time, and the replay, which gave
  // up on a MALLOC over 65,536 back, reads it in one part.
  const { rows, id } = freedAtOnce(200, { from: 2, step: 1000, held: 10 });
  rows.push(mem("MALLOC", id - 70_000 + 500, hexPtr(0x900000), '"{size:64}"'));
  const { parts, leakCount } = await oneWindowAtBudget(rows, id, 400);
  assert.equal(parts, 1);
  assert.equal(leakCount, 21);
});

Deno.test("a replay whose MALLOCs come more than 65,536 IDs back ends where its FREEs pass its room in 8 parts, as it did at such a MALLOC, rather than read the log in more", async () => {
  // 4,000 blocks each freed at once, from ID 200,000, then one held about
  // 200,000 IDs back: every FREE is remembered, 4,000 of them, where a
  // budget of 400 rows gives room for 165 (counted at a rebuild, the first
  // at 3,072): 32 parts.
  const { rows, id } = freedAtOnce(4000, { from: 200_000, step: 2 });
  rows.push(mem("MALLOC", 2, hexPtr(0x1000 * 10_000), '"{size:64}"'));
  const { parts, leakCount } = await oneWindowAtBudget(rows, id, 400);
  assert.equal(parts, undefined);
  assert.equal(leakCount, 1);
});

Deno.test("a replay whose MALLOCs come more than 65,536 IDs back reads the log in up to 8 parts where its FREEs pass its room", async () => {
  // As above, with a budget of 2,000 rows: room for 4,000 FREEs in a few
  // parts.
  const { rows, id } = freedAtOnce(4000, { from: 200_000, step: 2 });
  rows.push(mem("MALLOC", 2, hexPtr(0x1000 * 10_000), '"{size:64}"'));
  const { parts, leakCount } = await oneWindowAtBudget(rows, id, 2000);
  assert.ok(parts !== undefined && parts >= 2 && parts <= 8, `${parts}`);
  assert.equal(leakCount, 1);
});

Deno.test("a log written as msMemScope writes one, each MALLOC row just before its block's FREE and a long-lived block's far back, is replayed as read in one part: the IDs of blocks gone are not kept", async () => {
  // 4,000 blocks at one address, each freed before the next, their rows
  // written at each free; then a block made at ID 3 and freed last, and
  // one made at ID 5 and never freed, whose rows come at the end. The
  // FREEs are remembered at one Ptr's slot; the 4,000 IDs, kept until
  // forgotten, had passed the room of 201 blocks and the replay ended.
  const rows = [mark(1)];
  let id = 200_000;
  for (let n = 0; n < 4000; n++, id += 2) {
    rows.push(mem("MALLOC", id, hexPtr(0x1000), '"{size:64}"'));
    rows.push(mem("FREE", id + 1, hexPtr(0x1000), '"{size:64}"'));
  }
  rows.push(mem("MALLOC", 3, hexPtr(0x9000), '"{size:64}"'));
  rows.push(mem("FREE", id++, hexPtr(0x9000), '"{size:64}"'));
  rows.push(mem("MALLOC", 5, hexPtr(0xa000), '"{size:64}"'));
  const { parts, leakCount } = await oneWindowAtBudget(rows, id, 400);
  assert.equal(parts, 1);
  assert.equal(leakCount, 1);
});

Deno.test("a window whose blocks are all freed at exit in any order, written as msMemScope writes them (each MALLOC row at its free), is replayed as read in one part: with each ID once, a block at a Ptr never freed in the window is a leak at once", async () => {
  // 4,000 blocks, freed past the window's end in another order, each
  // MALLOC row just before its FREE: every MALLOC up to 4,000 IDs behind
  // the largest before it. A budget of 400 rows gives room for 201 blocks:
  // held until no later MALLOC could take their IDs, they passed it. One
  // leak listed (of each 64th of the Ptrs): those listed take room too.
  const rows = [mark(1)];
  const id = 8010;
  const order = Array.from({ length: 4000 }, (_, n) => (n * 1543) % 4000);
  for (const [k, n] of order.entries()) {
    rows.push(
      mem("MALLOC", 3 + 2 * n, hexPtr(0x1000 * (n + 1)), '"{size:64}"'),
    );
    rows.push(mem("FREE", id + 2 + k, hexPtr(0x1000 * (n + 1)), '"{size:64}"'));
  }
  const { parts, leakCount } = await oneWindowAtBudget(rows, id, 400, 1);
  assert.equal(parts, 1);
  assert.equal(leakCount, 4000);
});

/**
 * A mark at ID 1, then `count` blocks at addresses of their own, each
 * MALLOC row just before its block's FREE, but every `late`th block's
 * MALLOC row `behind` blocks after its FREE (a FREE read before the
 * MALLOC it frees), and last a block made at ID 2, never freed: its
 * MALLOC far behind every other, so a replay as read remembers FREEs as
 * far back as the window goes. `id`: the ID after them.
 */
function freedBeforeRead(
  count: number,
  { late, behind }: { late: number; behind: number },
): { rows: string[]; id: number } {
  const rows = [mark(1)];
  const waiting: string[][] = [];
  for (let n = 0; n < count; n++) {
    const at = hexPtr(0x1000 * (n + 1)), id = 3 + 2 * n;
    const malloc = mem("MALLOC", id, at, '"{size:64}"');
    const free = mem("FREE", id + 1, at, '"{size:64}"');
    if (n % late) rows.push(malloc, free);
    else {
      rows.push(free);
      (waiting[n + behind] ??= []).push(malloc);
    }
    rows.push(...waiting[n] ?? []);
  }
  for (const later of waiting.slice(count)) rows.push(...later ?? []);
  rows.push(mem("MALLOC", 2, hexPtr(0x1000 * (count + 1)), '"{size:64}"'));
  return { rows, id: 3 + 2 * count };
}

Deno.test("a replay reading on from the rows the first pass kept remembers a FREE only while a MALLOC at its Ptr is still to come: a log whose MALLOCs come from far back, each but a few just before its FREE, is read once more", async () => {
  // 4,000 blocks, every 50th MALLOC row 30 blocks after its FREE, and one
  // MALLOC 8,000 IDs behind the rest: a replay remembers every FREE of the
  // window that a MALLOC still to come may need, and every one may: 4,000
  // of them, where a budget of 400 rows gives room for 165. The first pass
  // counted the MALLOCs past the rows it kept, by Ptr: the FREEs whose
  // Ptrs have none left to come are not remembered.
  const { rows, id } = freedBeforeRead(4000, { late: 50, behind: 30 });
  const r = await oneWindowAtBudget(rows, id, 400);
  assert.equal(r.leakCount, 1);
  assert.equal(r.passes, 2);
});

Deno.test("a replay reading on from the rows the first pass kept ends where a MALLOC comes that the MALLOCs to come did not count, rather than take for a leak a block whose FREE it forgot", async () => {
  // The log above, its MALLOCs to come emptied after the first pass, as
  // if it had counted none: the replay forgets every FREE at once, and the
  // first late MALLOC finds its Ptr's count at 0.
  const { rows, id } = freedBeforeRead(4000, { late: 50, behind: 30 });
  const path = tempLog(
    [HEADER, ...rows, mark(id), mark(id + 1), ""].join("\n"),
  );
  const checked = checkOptions({ mstxInfo: "step", rowBudget: 400 });
  using log = await openEventLog(path);
  const windows = new Map([[0, { a: 1, b: id, c: id + 1 }]]);
  for (const emptied of [false, true]) {
    const first = (await nativeFirstPass(log, checked))!;
    assert.ok(first.freed && first.resume, "a first pass past its budget");
    if (emptied) first.freed.fill(0, LEAK_FREED_BYTES - 2 ** 22);
    const found = new FoundLeaks(Int32Array.from([0]), checked.maxLeaks);
    const stream = await nativeStream(log, checked, {
      first,
      windows,
      resume: first.resume,
      found,
    });
    // Never a leak that is not one: where the counts were emptied, no
    // answer (the caller's passes in parts take over).
    assert.deepEqual(
      [stream.complete, stream.reads, found.counts[0]],
      emptied ? [false, 1, 0] : [true, 1, 1],
    );
  }
  Deno.removeSync(path);
});

Deno.test("a first pass in two halves counts the MALLOCs past the rows it kept in either half, where the first stopped keeping and where the join did", async () => {
  // 280,000 blocks as above (36 MB, read by two threads), every 500th
  // MALLOC row 300 blocks after its FREE. A budget of 100,000 rows: the
  // first half stops keeping rows; 600,000: the second half does, after
  // the first half's 280,000 or so, and the join stops at the budget.
  const { rows, id } = freedBeforeRead(280_000, { late: 500, behind: 300 });
  for (const rowBudget of [100_000, 400_000]) {
    const r = await oneWindowAtBudget(rows, id, rowBudget);
    assert.ok(r.bytes > 32 << 20, "a log leak_scan.c reads in two halves");
    assert.equal(r.leakCount, 1, `budget ${rowBudget}`);
    assert.equal(r.passes, 2, `budget ${rowBudget}`);
  }
});

/** Value `at` (LEAK_SPAN_VALUES) of device 0's span in a first pass over `rows`. */
async function firstSpan(rows: string[], at: number) {
  const checked = checkOptions({ mstxInfo: "step", startIndex: 0 });
  const path = tempLog([HEADER, ...rows, ""].join("\n"));
  using log = await openEventLog(path);
  const first = (await nativeFirstPass(log, checked))!;
  Deno.removeSync(path);
  return first.spans?.[at];
}

Deno.test("the native first pass measures how far MALLOCs come behind the largest MALLOC ID before them, in each half of a large log and across the two", async () => {
  const disorder = (rows: string[]) => firstSpan(rows, 3);
  const malloc = (id: number) =>
    mem("MALLOC", id, hexPtr(0x1000 * id), '"{size:8}"');
  // FREEs and other event types do not count; a MALLOC 18 back does.
  assert.equal(
    await disorder([
      mark(1),
      malloc(10),
      mem("FREE", 40, hexPtr(0x1000), '"{size:8}"'),
      malloc(20),
      malloc(15),
      mem("MALLOC", 2, hexPtr(0x2000), '"{size:8}"', 0, "PTA"),
      malloc(30),
      malloc(12),
      malloc(31),
    ]),
    18,
  );
  // 37 MB, read by two threads, each half's MALLOCs in ID order: rows of
  // one length, the first half's one more, so that the second half begins
  // at the row that comes back from 2,499,999 to 1,000,000.
  const half = 250_000;
  const rows = [mark(1)];
  for (let n = 0; n < half; n++) rows.push(malloc(2_250_000 + n));
  for (let n = 0; n < half - 1; n++) rows.push(malloc(1_000_000 + n));
  assert.equal(await disorder(rows), 2_499_999 - 1_000_000);
});

Deno.test("the native first pass says whether the log's MALLOC IDs each came once, in each half of a large log and across the two", async () => {
  const once = (rows: string[]) => firstSpan(rows, 4);
  const malloc = (id: number | string, device = 0) =>
    mem("MALLOC", id, hexPtr(0x1000 * (Number(id) || 1)), '"{size:8}"', device);
  const free = mem("FREE", 20, hexPtr(0x1000), '"{size:8}"');
  // FREEs do not count; a MALLOC ID twice does, on any device, however
  // it is written.
  assert.equal(await once([mark(1), malloc(20), free, malloc(5)]), 1);
  assert.equal(await once([mark(1), malloc(20), malloc(5), malloc(20)]), 0);
  assert.equal(await once([mark(1), malloc(20), malloc(20, 1)]), 0);
  assert.equal(await once([mark(1), malloc(20), malloc("020")]), 0);
  // IDs far apart (the bits grow down, then up, 2^27 at most).
  assert.equal(
    await once([mark(1), malloc(9e6), malloc(3), malloc(1.2e8), malloc(4)]),
    1,
  );
  assert.equal(await once([mark(1), malloc(3), malloc(2 ** 28)]), 0);
  // 37 MB, read by two threads (as in the test above): each half's IDs
  // once, then one of the first half's again in the second.
  const half = 250_000;
  const rows = [mark(1)];
  for (let n = 0; n < half; n++) rows.push(malloc(2_250_000 + n));
  for (let n = 0; n < half - 1; n++) rows.push(malloc(1_000_000 + n));
  assert.equal(await once(rows), 1);
  rows[rows.length - 1] = malloc(2_250_000 + 7);
  assert.equal(await once(rows), 0);
});

/**
 * `count` rows of `event` pushed onto `rows`, IDs from `id` on, the n-th at
 * address `step` x (n + `from`), of `size` bytes; returns the ID after them.
 */
function pushBlocks(
  rows: string[],
  id: number,
  count: number,
  { event = "MALLOC", from = 1, step = 0x1000, size = 64 } = {},
): number {
  for (let n = 0; n < count; n++) {
    rows.push(mem(event, id++, hexPtr(step * (n + from)), `"{size:${size}}"`));
  }
  return id;
}

Deno.test("the Ptrs of blocks already freed take none of a replay's room: fewer blocks pending than its room, and few FREEs remembered, are replayed in one part", async () => {
  // 160 blocks held, then 5,000 at addresses of their own, each freed at
  // once, their IDs 1,000 apart, and a last block held 59,500 IDs behind
  // the largest MALLOC ID: the FREEs of that many IDs are remembered,
  // about 60 at a time. A budget of 400 rows gives room for 201 blocks and
  // 165 FREEs. When a Ptr's slot held its largest FREE ID too, the 160
  // Ptrs pending and the 60 freed counted together, and the replay split.
  const rows = [mark(1)];
  let id = pushBlocks(rows, 2, 160);
  for (let n = 0; n < 5000; n++) {
    const at = hexPtr(0x1000 * (n + 1000));
    id += 1000;
    rows.push(mem("MALLOC", id, at, '"{size:64}"'));
    rows.push(mem("FREE", id + 1, at, '"{size:64}"'));
  }
  rows.push(mem("MALLOC", id - 59_500, hexPtr(0x1000 * 10_000), '"{size:64}"'));
  const { parts, leakCount } = await oneWindowAtBudget(rows, id + 2, 400);
  assert.equal(parts, 1);
  assert.equal(leakCount, 161);
});

Deno.test("a replay holds no block at a Ptr no FREE names: a window that frees nothing is read once, each leak counted, its first maxLeaks listed, bytes past 2^53 summed exactly", async () => {
  // 3,000 blocks, none freed, at addresses of their own; one in 20 takes
  // the ID of one of the last 5 (at another address, which it replaces);
  // one in 50 of 2^60 bytes; rows jostled. A budget of 2,000 rows gives
  // room for 1,001 blocks, those whose IDs may still be taken (a few
  // hundred IDs' worth) and the leaks listed (up to 64 x maxLeaks) among
  // them: held, they took 3 parts and more.
  const random = seeded(5);
  const rows: string[] = [];
  for (let id = 2; id < 3002; id++) {
    const taken = id > 10 && random(20) === 0;
    const size = random(50) ? 1 + random(4096) : 2 ** 60;
    rows.push(
      mem(
        "MALLOC",
        taken ? id - 1 - random(5) : id,
        hexPtr(0x1000 * id),
        `"{size:${size}}"`,
      ),
    );
  }
  const log = [mark(1), ...jostled(rows, random)];
  for (const maxLeaks of [0, 7, 5000]) {
    const r = await oneWindowAtBudget(log, 3002, 2000, maxLeaks);
    assert.ok(r.leakCount > 2800, `${r.leakCount} leaks`);
    // Listed, they take room as blocks do: every one listed splits.
    if (maxLeaks === 5000) continue;
    assert.equal(r.parts, 1, `maxLeaks ${maxLeaks}`);
    // The first pass and one read; only the listed rows read back.
    assert.equal(r.passes, 2, `maxLeaks ${maxLeaks}`);
  }
});

Deno.test("a replay that splits its part at its room keeps of the blocks at Ptrs no FREE names the counts and listed leaks of its own half, and finds the leaks the replay in memory finds", async () => {
  const random = seeded(23);
  for (let log = 0; log < 4; log++) {
    const path = tempLog(
      [HEADER, ...manyPending(random, 20 + 10 * log), ""].join("\n"),
    );
    const options = { mstxInfo: "step", rowBudget: 400, maxLeaks: 3 * log };
    using file = await openEventLog(path);
    const { one } = await firstThenStream(file, options);
    assert.ok(typeof one === "object" && one.parts >= 2, `log ${log}`);
    assert.ok(one.unlisted.some((u) => u.count > 0), `log ${log}`);
    const inMemory = await checkLeaksFile(path, {
      ...options,
      rowBudget: Infinity,
    });
    assert.ok(inMemory.leakCount > 500, `log ${log}: ${inMemory.leakCount}`);
    assert.deepEqual(
      { ...await checkLeaksFile(path, options), passes: 0 },
      { ...inMemory, passes: 0 },
      `log ${log}`,
    );
  }
});

Deno.test("the Ptrs a first pass saw freed include the FREEs of either half that it did not keep: none of the blocks they free is taken for a leak", async () => {
  // 35 MB, read by two threads: blocks allocated in the first half, each
  // but every 1,000th freed in the second. At a budget of 100,000 rows the
  // first half stops keeping rows, and the join drops the rows the second
  // half kept; at one just past the MALLOCs, the join drops those past it.
  const count = 280_000;
  const rows = [mark(1)];
  pushBlocks(rows, 2, count);
  for (let n = 0; n < count; n++) {
    if (n % 1000) {
      rows.push(
        mem("FREE", 2 + count + n, hexPtr(0x1000 * (n + 1)), '"{size:64}"'),
      );
    }
  }
  const id = 2 + 2 * count;
  for (const rowBudget of [100_000, count + 5000]) {
    const r = await oneWindowAtBudget(rows, id, rowBudget, 10);
    assert.equal(r.leakCount, count / 1000, `budget ${rowBudget}`);
    assert.equal(r.fromStart, count / 1000, `budget ${rowBudget}`);
    assert.ok(r.bytes > 32 << 20, "a log leak_scan.c reads in two halves");
  }
});

Deno.test("the Ptrs a first pass saw freed include the FREEs it kept: a replay of a part from the start takes none of the blocks they free for a leak", async () => {
  // 100 blocks freed at once, then 1,000 at addresses no FREE names: at a
  // budget of 150 rows the first pass keeps 50 of the FREEs.
  const rows = [mark(1)];
  let id = pushBlocks(rows, 2, 100);
  id = pushBlocks(rows, id, 100, { event: "FREE" });
  id = pushBlocks(rows, id, 1000, { step: 0x100000, size: 8 });
  const r = await oneWindowAtBudget(rows, id, 150, 10);
  assert.equal(r.leakCount, 1000);
  assert.equal(r.fromStart, 1000);
});

Deno.test("a window whose MALLOCs at unfreed Ptrs all take one ID, more of them than a replay's room, is replayed in one read: each MALLOC leaves its block, taken, to the free list", async () => {
  // 3,000 MALLOCs of ID 500 (each replaces the one before), at a budget of
  // 1,000 rows: room for 501 blocks. The blocks whose ID was taken stayed
  // queued, splits freed none of them, and the passes in parts that took
  // over never ended.
  const rows = [mark(1)];
  for (let n = 0; n < 3000; n++) {
    rows.push(mem("MALLOC", 500, hexPtr(0x10000 * (n + 1)), '"{size:8}"'));
  }
  const r = await oneWindowAtBudget(rows, 10_000, 1000, 5);
  assert.equal(r.leakCount, 1);
  assert.equal(r.passes, 2);
});

Deno.test("a replay whose queue of blocks at unfreed Ptrs passes its room, a MALLOC coming far back, splits it with its part: the other half's blocks go at once", async () => {
  // 40,000 MALLOCs never freed, the 2,001st 3,000 IDs back: each block
  // waits 3,001 IDs for a MALLOC that may take its ID, at a budget of
  // 4,000 rows (room for 2,001). Two parts, not 64 and the passes in parts.
  const rows = [mark(1)];
  for (let n = 0; n < 40_000; n++) {
    const id = 10_000 + n - (n === 2000 ? 3000 : 0);
    rows.push(mem("MALLOC", id, hexPtr(0x10000 * (n + 1)), '"{size:8}"'));
  }
  const r = await oneWindowAtBudget(rows, 60_000, 4000, 5);
  assert.equal(r.leakCount, 40_000);
  assert.ok(r.passes <= 4, `${r.passes} passes`);
});

Deno.test("a job that frees its blocks only past its last mark leaks them as one that never frees them: replayed in one read, none held", async () => {
  // 6,000 blocks, each freed with an ID past C, the FREEs written before
  // the marks B and C (so that no bound drops them as they are read). They
  // name every Ptr, but none with an ID up to C: at a budget of 2,000 rows
  // (room for 1,001), holding the blocks took 8 parts.
  const rows = [mark(1)];
  const id = pushBlocks(rows, 2, 6000);
  pushBlocks(rows, 100_000, 6000, { event: "FREE" });
  const r = await oneWindowAtBudget(rows, id, 2000, 10);
  assert.equal(r.leakCount, 6000);
  assert.equal(r.parts, 1);
  // The first pass, the rows inside the window (past the budget), the one
  // replay as the rows are read.
  assert.equal(r.passes, 3);
});
