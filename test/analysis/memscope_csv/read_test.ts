import assert from "node:assert/strict";
import {
  MEMSCOPE_HEADER,
  MemscopeCsvError,
  type MemscopeRecord,
  type MemscopeRow,
  openEventLog,
  readMemscopeBytes,
  readMemscopeCsv,
  readMemscopeRowsAt,
  readMemscopeStart,
} from "../../../analysis/memscope_csv/mod.ts";

const FIXTURES =
  new URL("../../../../shared/fixtures/msmemscope/", import.meta.url).pathname;
const HEADER = MEMSCOPE_HEADER.join(",");
const enc = new TextEncoder();

function records(text: string, options = {}): MemscopeRecord[] {
  const out: MemscopeRecord[] = [];
  readMemscopeBytes(
    enc.encode(text),
    (r) => void out.push(r.toRecord()),
    options,
  );
  return out;
}

function tempFile(text: string | Uint8Array): string {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_csv_" });
  const path = `${dir}/memscope_dump.csv`;
  if (typeof text === "string") Deno.writeTextFileSync(path, text);
  else Deno.writeFileSync(path, text);
  return path;
}

/** A plain, slow CSV parser to check the fast one against. */
function reference(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [], field = "", quoted = false, i = 0;
  const endRow = () => {
    row.push(field);
    if (row.length > 1 || row[0] !== "") rows.push(row);
    row = [];
    field = "";
  };
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") row.push(field), field = "";
    else if (c === "\n") {
      if (field.endsWith("\r")) field = field.slice(0, -1);
      endRow();
    } else field += c;
    i++;
  }
  if (field !== "" || row.length) endRow();
  return rows;
}

Deno.test("memscope_csv reads every fixture, row for row", async () => {
  for (
    const name of [
      "compare_baseline.csv",
      "compare_leaks.csv",
      "memscope_dump_two_ranks_a.csv",
      "memscope_dump_two_ranks_b.csv",
    ]
  ) {
    const text = Deno.readTextFileSync(FIXTURES + name);
    const want = reference(text).slice(1);
    const got: MemscopeRecord[] = [];
    const summary = await readMemscopeCsv(
      FIXTURES + name,
      (r) => void got.push(r.toRecord()),
    );
    assert.equal(summary.rows, want.length, name);
    assert.equal(summary.bytes, enc.encode(text).length);
    assert.deepEqual(summary.header, [...MEMSCOPE_HEADER]);
    got.forEach((r, i) => {
      const w = want[i];
      assert.equal(r.id, Number(w[0]));
      assert.equal(r.event, w[1]);
      assert.equal(r.eventType, w[2]);
      assert.equal(r.name, w[3]);
      assert.equal(r.timestamp, w[4]);
      assert.equal(r.pid, Number(w[5]));
      assert.equal(r.device, w[7]);
      assert.equal(r.attr, w[9]);
      if (w[8] !== "N/A") assert.equal(BigInt(r.ptr!), BigInt(w[8]));
    });
  }
});

Deno.test("memscope_csv parses new and old Attr, hex and decimal Ptr, every kind of Device Id", () => {
  const [a, b, c, d] = records(
    `${HEADER}
1,MALLOC,HAL,N/A,1764753084425654520,7,8,0,0x000012c041400000,"{allocation_id:3,addr:0x000012c041400000,size:18874368,owner:PTA@model@ACTIVATION}",,
2,FREE,PTA,N/A,1746006024578981,7,8,N/A,20616939214848,"{addr:20616939214848,size:-18944,owner:,MID:7}",,
3,MALLOC,HOST,N/A,5,7,8,cpu,0xfffffffffffffff0,"{addr:0xfffffffffffffff0,size:1}",,
4,MALLOC,HAL,N/A,5,7,8,host,N/A,,,
`,
  );
  assert.equal(a.ptr, 0x12c041400000);
  assert.equal(a.size, 18874368);
  assert.equal(a.owner, "PTA@model@ACTIVATION");
  assert.equal(a.timestamp, "1764753084425654520");
  assert.equal(b.ptr, 20616939214848);
  assert.equal(b.size, -18944);
  assert.equal(b.owner, undefined);
  assert.equal(b.device, "N/A");
  assert.equal(c.ptr, 0xfffffffffffffff0n);
  assert.equal(c.device, "cpu");
  assert.equal(d.ptr, undefined);
  assert.equal(d.size, undefined);
  assert.equal(d.device, "host");
});

Deno.test("memscope_csv takes a BOM, CRLF, empty lines and a last line without newline", () => {
  const text =
    `\ufeff${HEADER}\r\n\r\n1,MSTX,Mark,"step",5,1,1,0,N/A,,,\r\n\n` +
    `2,MSTX,Mark,"step",6,1,1,0,N/A,,,`;
  const rows = records(text);
  assert.deepEqual(rows.map((r) => [r.id, r.name]), [[1, "step"], [2, "step"]]);
  assert.equal(rows[1].attr, "");
});

Deno.test("memscope_csv unquotes names with commas, doubled quotes and newlines, and counts lines", () => {
  const text = `${HEADER}
1,MSTX,Mark,"a, ""quoted"" name
on two lines",5,1,1,0,N/A,,,
2,MSTX,Mark,plain,6,1,1,0,N/A,,,
`;
  const lines: number[] = [];
  const names: string[] = [];
  readMemscopeBytes(enc.encode(text), (r) => {
    lines.push(r.line);
    names.push(r.name);
  });
  assert.deepEqual(names, ['a, "quoted" name\non two lines', "plain"]);
  assert.deepEqual(lines, [2, 4]);
});

Deno.test("memscope_csv finds columns by name in any order and keeps extra ones", () => {
  const rows: string[] = [];
  readMemscopeBytes(
    enc.encode(
      "Attr,Extra,Ptr,Device Id,Event Type,Event,Name,ID,Timestamp(ns),Thread Id,Process Id\n" +
        '"{size:9}",x,0x10,3,HAL,MALLOC,N/A,42,7,2,1\n',
    ),
    (r) =>
      rows.push(
        `${r.id} ${r.event} ${r.eventType} ${r.device} ${r.ptr} ${r.size} ${r.pid} ${r.tid} ${
          r.column("extra")
        }`,
      ),
  );
  assert.deepEqual(rows, ["42 MALLOC HAL 3 16 9 1 2 x"]);
});

Deno.test("memscope_csv names the missing column of a wrong header", () => {
  assert.throws(
    () => records("ID,Event,Event Type,Name,Ptr,Attr\n1,MSTX,Mark,s,N/A,\n"),
    (e: Error) =>
      e instanceof MemscopeCsvError &&
      /missing columns "Timestamp\(ns\)", "Process Id", "Thread Id", "Device Id"/
        .test(e.message),
  );
  assert.throws(
    () =>
      records("ID,Event,Device Id,Ptr\n", {
        columns: ["ID", "Event", "Device Id", "Ptr", "Attr"],
      }),
    /Wrong header in input: missing column "Attr"/,
  );
});

Deno.test("memscope_csv tells a non-CSV, another CSV and an empty file apart", () => {
  assert.throws(
    () => readMemscopeBytes(new Uint8Array([0x7f, 0x45, 0, 1, 10]), () => {}),
    /Not a CSV file: input holds binary data/,
  );
  assert.throws(
    () => records("name,age\nbob,3\n"),
    (e: Error) =>
      /^Not an msMemScope event log: input has no ID and Event columns in its first line; /
        .test(e.message) && !e.message.includes("name,age"),
  );
  assert.throws(
    () => records(""),
    /Not an msMemScope event log: input is empty/,
  );
  assert.throws(
    () => readMemscopeBytes(new Uint8Array(3 << 20).fill(65), () => {}),
    /Not a CSV file: input has no line break in its first MiB/,
  );
});

Deno.test("memscope_csv frames rows cut by chunk ends like a plain parser", async () => {
  // Quoted commas, doubled quotes, newlines in quotes, CRLF here and there.
  let text = HEADER + "\n";
  let seed = 7;
  const rand = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const pieces = ["a", "b,c", 'say ""hi""', "x\ny", "", "long".repeat(40)];
  for (let id = 1; text.length < 400_000; id++) {
    const name = pieces[rand(pieces.length)];
    const eol = rand(5) === 0 ? "\r\n" : "\n";
    text += `${id},MSTX,Mark,"${name}",${id},1,1,${
      rand(3)
    },N/A,"{k:${id},v:2}",,${eol}`;
    if (rand(50) === 0) text += "\n";
  }
  const want = reference(text).slice(1);
  const path = tempFile(text);
  const got: string[][] = [];
  await readMemscopeCsv(path, (r) => {
    got.push([String(r.id), r.name, r.device, r.attr]);
  }, { bufferSize: 65536 });
  assert.equal(got.length, want.length);
  got.forEach((g, i) =>
    assert.deepEqual(g, [want[i][0], want[i][3], want[i][7], want[i][9]])
  );
});

Deno.test("memscope_csv startsWith skips other rows but still counts them", () => {
  const text = `${HEADER}
1,OP_LAUNCH,ATEN_START,op,5,1,1,0,N/A,,,
2,MALLOC,PTA,N/A,5,1,1,0,0x10,"{size:1}",,
3,MALLOC,HAL,N/A,5,1,1,0,0x20,"{size:2}",,
4,MSTX,Mark,"step",5,1,1,0,N/A,,,
5,FREE,"HAL",N/A,5,1,1,0,0x20,"{size:2}",,
`;
  const ids: number[] = [];
  const summary = readMemscopeBytes(enc.encode(text), (r) => ids.push(r.id), {
    startsWith: { Event: "MF", "Event Type": "HM" },
  });
  assert.deepEqual(ids, [3, 4, 5]);
  assert.equal(summary.rows, 5);
});

Deno.test("memscope_csv reads rows back at the offsets it reported", async () => {
  let text = `\ufeff${HEADER}\n`;
  for (let id = 1; id <= 20000; id++) {
    text += `${id},MSTX,Mark,"m${id}",${id},1,1,0,N/A,,,\n`;
  }
  const path = tempFile(text);
  const offsets = new Map<number, number>();
  const every: number[] = [];
  await readMemscopeCsv(path, (r) => {
    if (r.id % 997 === 0) offsets.set(r.offset, r.id);
    every.push(r.offset);
  });
  using log = await openEventLog(path);
  for (const source of [path, log]) {
    const seen: string[] = [];
    await readMemscopeRowsAt(
      source,
      [...offsets.keys()].reverse(),
      (r) => seen.push(`${r.offset}:${r.name}`),
    );
    assert.deepEqual(
      seen,
      [...offsets].map(([off, id]) => `${off}:m${id}`),
    );
    // Every row: more rows than one native batch holds.
    const names: string[] = [];
    await readMemscopeRowsAt(source, every, (r) => names.push(r.name));
    assert.deepEqual(names, every.map((_, i) => `m${i + 1}`));
  }
});

Deno.test("memscope_csv reads back more than a batch of rows, a row longer than a batch, and refuses one past 16 MiB, from a path and an opened log alike", async () => {
  const row = (id: number, stack: number) =>
    `${id},MALLOC,HAL,N/A,${id},1,1,0,0x${
      id.toString(16).padStart(16, "0")
    },"{size:${id}}","${"s".repeat(stack)}",\n`;
  // 300 rows of 12 KB (3.6 MB, several 1 MiB batches), then one of 3 MiB.
  let text = `${HEADER}\n`;
  for (let id = 1; id <= 300; id++) text += row(id, 12 << 10);
  text += row(301, 3 << 20) + row(302, 10);
  const path = tempFile(text);
  const show = (r: MemscopeRow) =>
    [r.offset, r.idText, r.attr, r.column("Call Stack(Python)").length]
      .join("|");
  const offsets: number[] = [];
  const full: string[] = [];
  await readMemscopeCsv(path, (r) => {
    offsets.push(r.offset);
    full.push(show(r));
  });
  assert.equal(full.length, 302);
  using log = await openEventLog(path);
  for (const source of [path, log]) {
    const back: string[] = [];
    await readMemscopeRowsAt(source, offsets, (r) => back.push(show(r)));
    assert.deepEqual(back, full);
  }

  // A quote left open runs the row on to the end of a 17 MiB file.
  const open = tempFile(
    `${HEADER}\n${row(1, 10)}2,MALLOC,HAL,N/A,2,1,1,0,0x1,"{size:1}\n${
      "x".repeat(17 << 20)
    }\n${row(3, 10)}`,
  );
  const at = (HEADER + "\n" + row(1, 10)).length;
  using openLog = await openEventLog(open);
  for (const source of [open, openLog]) {
    await assert.rejects(
      () => readMemscopeRowsAt(source, [at], () => {}),
      MemscopeCsvError,
      `Row at byte ${at} of ${open} runs on for over 16 MiB`,
    );
  }
});

Deno.test("memscope_csv finds where the data rows start as a full read does, whatever the header's length", async () => {
  const row = '1,MSTX,Mark,"step",5,1,1,0,N/A,';
  // A header past the first small read; one past 1 MiB that a full 2 MiB
  // read still takes whole; one that runs on past the first 2 MiB.
  for (const pad of [0, 100 << 10, (1 << 20) + (100 << 10), 3 << 20]) {
    const extra = pad ? `,${"x".repeat(pad)}` : "";
    const path = tempFile(`${HEADER}${extra}\n${row}\n${row}\n`);
    let full: { offset: number; line: number } | Error | undefined;
    try {
      await readMemscopeCsv(path, (r) => {
        full ??= { offset: r.offset, line: r.line };
      });
    } catch (e) {
      full = e as Error;
    }
    // A path, and an opened log (read without the scanner where it can).
    using log = await openEventLog(path);
    for (const source of [path, log]) {
      let start: { offset: number; line: number } | Error | undefined;
      try {
        const s = await readMemscopeStart(source);
        start = s && { offset: s.offset, line: s.line };
      } catch (e) {
        start = e as Error;
      }
      if (full instanceof Error) {
        assert.ok(start instanceof MemscopeCsvError, `pad ${pad}`);
        assert.equal(start.message, full.message);
      } else {
        assert.deepEqual(start, full, `pad ${pad}`);
        assert.equal(full?.offset, HEADER.length + extra.length + 1);
      }
    }
  }
});

Deno.test("readMemscopeStart of an opened log finds what the scanner finds: BOM, CRLF, empty lines, quotes, no data row, bad headers", async () => {
  const h =
    "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr";
  const logs = [
    h + "\n1,a\n",
    "\ufeff" + h + "\r\n\r\n\n1,a\n",
    h + "\n",
    h + "\n\n\r\n",
    h + "\n\r",
    h + "\n\r\r\n1",
    h,
    "\n" + h + "\n1\n",
    h.replace("ID", '"ID"') + "\n1\n",
    "ID,Event\n1\n",
    "x,y\n1\n",
    h + "\n" + "\n".repeat(70_000) + "1\n",
    h + "\r\n1,2",
    "",
  ];
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_start_" });
  const what = async (read: () => Promise<unknown>) => {
    try {
      return await read();
    } catch (e) {
      return (e as Error).message;
    }
  };
  try {
    for (const [i, text] of logs.entries()) {
      const path = `${dir}/${i}.csv`;
      Deno.writeTextFileSync(path, text);
      using log = await openEventLog(path);
      // A path is read by the scanner; an opened log first without it.
      assert.deepEqual(
        await what(() => readMemscopeStart(log)),
        await what(() => readMemscopeStart(path)),
        JSON.stringify(text.slice(0, 40)),
      );
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("memscope_csv reads back rows that quote commas and newlines, run past 4 KiB, end in CRLF or at the file's end, as a full read gives them", async () => {
  const stack = `"${"frame.py(12): f, g\n".repeat(600)}"`;
  const lines = [
    HEADER,
    `1,MALLOC,HAL,N/A,100,7,8,0,0x0000124040000000,"{size:64,owner:a ""b"", c}",${stack},`,
    `2,MSTX,Mark,"one, two\nthree",101,7,8,0,N/A,,,`,
    `3,FREE,HAL,N/A,102,7,8,0,0x0000124040000000,"{size:64}"\r`,
    "",
    `4,MALLOC,PTA,N/A,103,7,9,1,0x0000124040001000,"{size:128,owner:x}",,`,
  ];
  const path = tempFile(lines.join("\n"));
  const show = (r: MemscopeRow) =>
    [
      r.offset,
      r.idText,
      r.name,
      r.ptrText,
      r.timestamp,
      r.pid,
      r.tid,
      r.owner,
      r.attr,
    ]
      .join("|");
  const full: string[] = [];
  const offsets: number[] = [];
  await readMemscopeCsv(path, (r) => {
    full.push(show(r));
    offsets.push(r.offset);
  });
  assert.equal(full.length, 4);
  // An opened log is copied natively; a path is read in TypeScript. An
  // offset at an empty line reads the row after it.
  const blank = lines.join("\n").indexOf("\r\n\n") + 2;
  using log = await openEventLog(path);
  for (const source of [log, path]) {
    const back: string[] = [];
    await readMemscopeRowsAt(source, offsets, (r) => back.push(show(r)));
    assert.deepEqual(back, full);
    const after: string[] = [];
    await readMemscopeRowsAt(source, [blank], (r) => after.push(show(r)));
    assert.deepEqual(after, [full[3]]);
  }
});

Deno.test("memscope_csv says a log was cut while it was read, rather than give the rows before the cut as the whole log", async () => {
  let text = `${HEADER}\n`;
  const row = `1,MSTX,Mark,"step",5,1,1,0,N/A,${"x".repeat(100)},,\n`;
  text += row.repeat(Math.ceil((20 << 20) / row.length));
  const path = tempFile(text);
  using log = await openEventLog(path);
  for (const source of [path, log]) {
    Deno.writeTextFileSync(path, text);
    let cut = false;
    await assert.rejects(
      () =>
        readMemscopeCsv(source, () => {
          if (!cut) Deno.truncateSync(path, 10 << 20);
          cut = true;
        }),
      (e: Error) =>
        e instanceof MemscopeCsvError &&
        e.message ===
          `Cannot read ${path}: it got shorter while it was read (cut by whoever writes it); run again once the log is complete`,
    );
  }
});

Deno.test("memscope_csv reads a log from a pipe, which cannot be cut or seek, as from a file", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_csv_" });
  const text = `${HEADER}\n1,MSTX,Mark,"step",5,1,1,0,N/A,,,\n` +
    `2,MALLOC,HAL,N/A,6,1,1,0,0x0000124040000000,"{size:64}",,\n`;
  const fifo = `${dir}/pipe.csv`;
  new Deno.Command("mkfifo", { args: [fifo] }).outputSync();
  const writing = Deno.writeTextFile(fifo, text);
  const ids: number[] = [];
  await readMemscopeCsv(fifo, (r) => ids.push(r.id));
  await writing;
  assert.deepEqual(ids, [1, 2]);
});
