/**
 * The native converter (ffi/analysis, through analysis/snapshot/native.ts)
 * against the TypeScript one it replaces, while both exist: the same bytes,
 * the same summary and the same refusals, on msMemScope's fixtures, on the
 * bench's generated logs and on hand-made logs that reach each rule.
 */
import assert from "node:assert/strict";
import { writeMemscopeLog } from "../../../bench/_memscope_gen.ts";
import { SHAPES, writeShapedLog } from "../../../bench/_log_shapes.ts";
import {
  createSnapshotFile,
  type SnapshotOptions,
  writeSnapshot,
} from "../../../analysis/snapshot/mod.ts";
import { readMemoryRows } from "../../../analysis/snapshot/rows.ts";
import { writeRowsSnapshot } from "../../../analysis/snapshot/convert.ts";
import { createSnapshotFileNative } from "../../../analysis/snapshot/native.ts";
import { tempDir } from "../../e2e/_harness.ts";
import { FIXTURES, fixtures } from "./_check.ts";

type Options = SnapshotOptions & {
  untilNs?: number;
  emptyPid?: boolean;
  hostRows?: boolean[];
};
type Outcome = { bytes?: Uint8Array; result?: unknown; error?: string };

let serial = 0;

/** The TypeScript converter's file (or refusal), as the CLI makes it. */
async function typescript(
  inputs: string[],
  format: "pickle" | "json",
  options: Options,
): Promise<Outcome> {
  const out = `${tempDir()}/ts${serial++}.${format}`;
  try {
    const result = await createSnapshotFile(out, format, async (w) => {
      if (
        inputs.length === 1 && options.untilNs === undefined &&
        options.hostRows === undefined
      ) {
        return await writeSnapshot(inputs[0], w, options);
      }
      let rows;
      for (const [k, input] of inputs.entries()) {
        rows = await readMemoryRows(input, {
          pid: options.pid,
          into: rows,
          untilNs: options.untilNs,
          hostRows: options.hostRows?.[k],
        });
      }
      if (
        options.pid !== undefined && rows!.count === 0 && !options.emptyPid
      ) {
        throw new RangeError(`No memory rows of pid ${options.pid} in the log`);
      }
      return writeRowsSnapshot(rows!, w, options);
    });
    return { bytes: Deno.readFileSync(out), result };
  } catch (e) {
    return { error: `${(e as Error).name}: ${(e as Error).message}` };
  }
}

async function native(
  inputs: string[],
  format: "pickle" | "json",
  options: Options,
): Promise<Outcome> {
  const out = `${tempDir()}/c${serial++}.${format}`;
  try {
    const result = await createSnapshotFileNative(
      inputs,
      out,
      format,
      options,
    );
    return { bytes: Deno.readFileSync(out), result };
  } catch (e) {
    return { error: `${(e as Error).name}: ${(e as Error).message}` };
  }
}

/** Both converters on the same input; fails on the first difference. */
async function same(
  inputs: string[],
  format: "pickle" | "json" = "pickle",
  options: Options = {},
): Promise<Outcome> {
  const a = await typescript(inputs, format, options);
  const b = await native(inputs, format, options);
  const what = `${inputs.join(",")} ${format} ${JSON.stringify(options)}`;
  assert.equal(b.error, a.error, what);
  assert.deepEqual(b.result, a.result, what);
  if (a.bytes && b.bytes) {
    let i = 0;
    while (i < a.bytes.length && a.bytes[i] === b.bytes[i]) i++;
    assert.ok(
      i === a.bytes.length && a.bytes.length === b.bytes.length,
      `${what}: first difference at byte ${i} of ${a.bytes.length}/${b.bytes.length}`,
    );
  }
  return a;
}

const VARIANTS: Array<["pickle" | "json", Options]> = [
  ["pickle", {}],
  ["json", {}],
  ["pickle", { device: 0 }],
  ["pickle", { maxEntries: 1001 }],
  ["json", { maxEntries: 37 }],
  ["pickle", { maxEntries: 0 }],
];

Deno.test("native snapshot writes the TypeScript converter's bytes for every msMemScope fixture, with every option", async () => {
  assert.ok(fixtures.length >= 4, `fixtures missing in ${FIXTURES}`);
  for (const f of fixtures) {
    for (const [format, options] of VARIANTS) await same([f], format, options);
    await same([f], "pickle", { pid: 2523740 });
    await same([f], "pickle", { pid: 1 });
    await same([f], "pickle", { device: 9 });
    await same([f], "pickle", { history: false });
    await same([f], "pickle", { untilNs: 1746006014400000 });
  }
  await same(fixtures.slice(0, 2), "pickle", {});
  // GET /snapshot: the files of one process, empty or not.
  for (const pid of [2523740, 1]) {
    await same(fixtures.slice(2), "json", { pid, emptyPid: true });
    await same(fixtures.slice(2), "pickle", {
      pid,
      emptyPid: true,
      maxEntries: 100,
      device: 0,
    });
  }
});

Deno.test("native snapshot writes the OOM files' snapshot as the TypeScript converter did: one pid, rows up to the failure, state only or with history, an empty pid allowed", async () => {
  for (const f of fixtures) {
    for (const history of [true, false]) {
      for (const pid of [2523740, 1]) {
        await same([f], "pickle", {
          pid,
          untilNs: 1746006014400000,
          history,
          emptyPid: true,
        });
      }
    }
  }
});

Deno.test("native snapshot writes the TypeScript converter's bytes for the bench's generated logs, shape by shape", async () => {
  const dir = tempDir();
  const logs = [`${dir}/gen.csv`];
  await writeMemscopeLog(logs[0], 30_000);
  SHAPES.forEach((shape, i) => {
    logs.push(writeShapedLog(`${dir}/shape${i}.csv`, 20_000, shape).path);
  });
  for (const log of logs) {
    for (const [format, options] of VARIANTS) {
      assert.equal((await same([log], format, options)).error, undefined);
    }
  }
  const pid = /\n\d+,[A-Z_]+,[^,]*,[^,]*,\d+,(\d+),/.exec(
    Deno.readTextFileSync(logs[0]).slice(0, 4096),
  )![1];
  await same([logs[0]], "json", { pid: Number(pid) });
  await same([logs[0]], "pickle", { pid: Number(pid), maxEntries: 500 });
});

const HEADER =
  "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)";

function write(text: string | Uint8Array): string {
  const path = `${tempDir()}/memscope_dump_20260101000000.csv`;
  if (typeof text === "string") Deno.writeTextFileSync(path, text);
  else Deno.writeFileSync(path, text);
  return path;
}

Deno.test("native snapshot reads odd logs as the TypeScript reader does: BOM, CRLF, quotes, columns in any order, old Ptr and devices, stacks, OOM rows", async () => {
  const T = 1764753083997498000;
  const rows = [
    `1,MALLOC,HAL,N/A,${T},7,7,0,0x000012c000000000,"{addr:0x12c000000000,size:4194304}",,`,
    `2,MALLOC,PTA,N/A,${
      T + 1000
    },7,7,0,0x000012c000000000,"{addr:1,size:512}","train.py(12): step
model.py(40): forward","libtorch.so:99 at::empty;c10::alloc at alloc.cpp:7"`,
    `3,"MALLOC","PTA","a, ""b""",${
      T + 1000
    },7,7,"0",20615843020800,"{size: 1024 ,owner:x}",,`,
    `5,MALLOC,PTA,N/A,${T + 500},7,7,0,0x000012c000000400,{size:64},"  ;;",`,
    `4,FREE,PTA,N/A,${T + 2000},7,7,N/A,0x000012c000000000,"{size:512}",,`,
    `6,MALLOC,HOST,N/A,${T + 3000},7,7,cpu,0x7f0000000000,"{size:8192}",,`,
    `7,MALLOC,PTA,N/A,${T + 3000},7,7,host,0x7f0000000000,"{size:4096}",,`,
    `8,OOM_DETAIL,PTA,N/A,${T + 4000},7,7,0,N/A,"{size:999,device_free:1.5}",,`,
    `9,OOM_DETAIL,PTA,N/A,${T + 4000},7,7,0,N/A,"{size:9,free: 77 }",,`,
    `10,MALLOC,PTA,N/A,${T + 5000},8,8,1,0x000012c000100000,"{size:0}",,`,
    `11,FREE,HAL,N/A,${T + 6000},8,8,1,0x000012c000900000,"{size:2097152}",,`,
    `12,MALLOC,PTA,N/A,${T + 6000},8,8,1,0xffffffffffffffff,"{size:64}",,`,
    `13,FREE,PTA,N/A,${T + 7000},8,8,N/A,0x000012c000800000,"{size:64}",,`,
    `14,MALLOC,ATB,N/A,${
      T + 7000
    },8,8,1,0x000012c000a00000,"{size:9999999999999999}",,`,
    `x,MALLOC,PTA,N/A,${T + 7000},8,8,1,0x000012c000b00000,"{size:64}",,`,
    `15,MALLOC,PTA,N/A,17,8,8,1,0x000012c000c00000,"{size:64}",,`,
    `16,MSTX,Mark,"step",${T + 8000},8,8,1,N/A,,,`,
    ``,
    `17,MALLOC,PTA,N/A,${
      T + 9000
    },8,8,2,0x000012c000d00000,"{size:64}","x.py:3 run\r\ny.py(4) go",`,
    `18,OOM_DETAIL,HOST,N/A,${T + 9500},8,8,cpu,N/A,"{size:5,device_free:3}",,`,
  ];
  const lf = `${HEADER}\n${rows.join("\n")}\n`;
  const crlf = `\ufeff${HEADER}\r\n${rows.join("\r\n")}`;
  // Columns in another order, names in other cases and spaces.
  const cols = HEADER.split(",");
  const perm = [9, 0, 11, 2, 1, 4, 3, 8, 5, 6, 7, 10];
  const moved = [
    perm.map((k) => ` ${cols[k].toUpperCase()} `).join(","),
    `"{size:4096}",1,,HAL,MALLOC,${T},N/A,0x000012c000000000,7,7,0,`,
    `"{size:64}",2,,PTA,MALLOC,${T + 1},N/A,0x000012c000000100,7,7,0,`,
  ].join("\n");
  for (const text of [lf, crlf, moved]) {
    const log = write(text);
    for (const [format, options] of VARIANTS) {
      assert.equal((await same([log], format, options)).error, undefined);
    }
    await same([log], "pickle", { pid: 8 });
    await same([log], "json", { untilNs: T + 4000 });
    // A second log holding copies of the first's host rows (and host OOM).
    await same([log, log], "json", { hostRows: [true, false] });
  }
});

Deno.test("native snapshot refuses what the TypeScript converter refuses, in its words", async () => {
  const good = write(
    `${HEADER}\n1,MALLOC,HAL,N/A,5,7,7,0,0x10,"{size:64}",,\n`,
  );
  const refusals = [
    await same([write("")]),
    await same([write("\n\r\n\n")]),
    await same([write("a,b,c\n1,2,3\n")]),
    await same([write("ID,Event,Ptr\n1,MALLOC,0x10\n")]),
    await same([write(new Uint8Array([73, 68, 44, 0, 10]))]),
    await same([write("ID,Event" + "x".repeat(3 << 20))]),
    await same([write(`${HEADER}\n1,"MALLOC${"x".repeat(20 << 20)}\n`)]),
    await same([
      write(
        `${HEADER}\n1,MALLOC,HAL,N/A,5,7,7,0,0x10,"{size:99999999999999999999}",,\n`,
      ),
    ]),
    await same([
      write(
        `${HEADER}\n1,MALLOC,HAL,N/A,5,7,7,0,0x10,"{size:64}","f.py(${
          "9".repeat(30)
        }): x",\n`,
      ),
    ]),
    await same([good], "pickle", { device: 3 }),
    await same([good], "pickle", { pid: 99 }),
  ];
  for (const r of refusals) assert.ok(r.error, JSON.stringify(r));
});

/** A log past the size where two threads read it (32 MiB), with stacks,
 * devices of every kind and a row `middle` put in at its middle. */
function bigLog(middle = "", tail = ""): string {
  const T = 1764753083997498000;
  const stacks = [
    ",",
    `"train.py(12): step\nmodel.py(40): forward",`,
    `,"libc.so:1 malloc;c10::alloc at alloc.cpp:7"`,
    `"a.py:3 run",b(9) c`,
  ];
  const devices = ["0", "1", "N/A", "cpu", "host", "2"];
  const lines: string[] = [HEADER];
  let bytes = 0;
  const half = 18 << 20;
  for (let i = 0; bytes < 2 * half; i++) {
    const dev = devices[i % devices.length];
    const pid = 100 + (i % 3);
    const ptr = `0x${
      (0x12c000000000 + (i % 5000) * 4096).toString(16).padStart(16, "0")
    }`;
    const pool = i % 7 === 0 ? "HAL" : i % 11 === 0 ? "HOST" : "PTA";
    const event = i % 13 === 0 ? "OP_LAUNCH" : i % 2 ? "FREE" : "MALLOC";
    const stack = stacks[(i >> 4) % stacks.length];
    const line = i % 997 === 0
      ? `${i},OOM_DETAIL,PTA,N/A,${
        T + i * 1000
      },${pid},1,${dev},N/A,"{size:${i},device_free:${i * 3}}",${stack}`
      : `${i % 9 === 0 ? i + 3 : i},${event},${pool},N/A,${
        T + Math.floor(i / 2) * 1000
      },${pid},1,${dev},${ptr},"{allocation_id:${i},addr:${ptr},size:${
        4096 + (i % 7) * 512
      }}",${stack}`;
    lines.push(line);
    bytes += line.length + 1;
    if (middle && bytes >= half && bytes - line.length - 1 < half) {
      lines.push(middle);
      bytes += middle.length + 1;
    }
  }
  return write(lines.join("\n") + "\n" + tail);
}

Deno.test("native snapshot reads a large log in two halves to the same bytes, also when a quoted newline lies across the middle or a row runs on past 16 MiB", async () => {
  await same([bigLog()], "pickle");
  const quoted = `7,MSTX,Mark,"${"x\n".repeat(40_000)}",5,1,1,0,N/A,,,`;
  await same([bigLog(quoted)], "json", { maxEntries: 5000 });
  const runOn = `8,MSTX,Mark,"${"y".repeat(17 << 20)}`;
  const r = await same([bigLog("", runOn)], "pickle");
  assert.match(r.error ?? "", /Row at line \d+ of .* runs on for over 16 MiB/);
});

/** The same numbers from the same seed, run after run (an LCG). */
function seeded(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2147483648);
}

Deno.test("native snapshot orders a long list out of time order as the TypeScript converter does: ties, NaN IDs, rows stamped 0, in halves sorted apart and merged", async () => {
  const T = 1764753083997498000;
  const lines = [HEADER];
  const next = seeded(7);
  // Over 2^17 rows of one device, so the list is ordered in two halves.
  const n = 300_000;
  const order = Array.from({ length: n }, (_, i) => i);
  for (let w = 0; w < n; w += 64) {
    for (let i = Math.min(w + 63, n - 1); i > w; i--) {
      const j = w + (next() % (i - w + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
  }
  for (const i of order) {
    const ptr = `0x${(0x12c000000000 + (i % 4000) * 4096).toString(16)}`;
    const event = i % 2 ? "FREE" : "MALLOC";
    // Ties of two stamps, a few stamps to a bucket of the first pass; now
    // and then a stamp that reads as 0, an ID that is not a number, or one
    // far from its row's place.
    const stamp = i % 5003 === 0 ? "late" : `${T + Math.floor(i / 2) * 37_000}`;
    const id = i % 4001 === 0 ? "N/A" : i % 7 === 0 ? `${n - i}` : `${i}`;
    lines.push(
      `${id},${event},PTA,N/A,${stamp},42,1,0,${ptr},"{size:${
        4096 + (i % 5) * 512
      }}",,`,
    );
  }
  const log = write(lines.join("\n") + "\n");
  await same([log], "pickle");
  await same([log], "json", { maxEntries: 20_000 });
});

Deno.test("native snapshot orders lists that rise in time but not in ID within one microsecond as the TypeScript converter does: short and long runs, NaN IDs, two devices interleaved", async () => {
  const T = 1764753083997498000;
  const lines = [HEADER];
  const next = seeded(11);
  let row = 0;
  for (let step = 0; step < 3000; step++) {
    // Runs of 1 to 80 rows stamped within one microsecond (runs past 32
    // are sorted another way), their IDs shuffled, now and then not a
    // number; the devices take turns, each rising in time on its own.
    const run = step % 97 === 0 ? 80 : 1 + (next() % 6);
    const ids = Array.from({ length: run }, (_, k) => row + k);
    for (let k = run - 1; k > 0; k--) {
      const j = next() % (k + 1);
      [ids[k], ids[j]] = [ids[j], ids[k]];
    }
    for (const [k, i] of ids.entries()) {
      const id = i % 211 === 0 ? "N/A" : `${i}`;
      const ptr = `0x${(0x12c000000000 + (i % 500) * 4096).toString(16)}`;
      const event = (i >> 1) % 2 ? "FREE" : "MALLOC";
      lines.push(
        `${id},${event},PTA,N/A,${T + step * 2000 + k % 999},42,1,${
          step % 2
        },${ptr},"{size:4096}",,`,
      );
    }
    row += run;
  }
  const log = write(lines.join("\n") + "\n");
  await same([log], "pickle");
  await same([log], "json");
  // One device: its list alone is put in order.
  await same([log], "pickle", { device: 0 });
  await same([log], "json", { device: 1 });
});

Deno.test("native snapshot orders a device whose rows rise in each half of the log but fall back in time between them, where its rows are cut in two", async () => {
  const T = 1764753083997498000;
  const lines = [HEADER];
  // Rows 0-499 stamped later than rows 500-999: each half rises.
  for (let i = 0; i < 1000; i++) {
    const stamp = T + ((i + 500) % 1000) * 1000;
    const ptr = `0x${(0x12c000000000 + (i % 50) * 4096).toString(16)}`;
    lines.push(
      `${i},${
        i % 2 ? "FREE" : "MALLOC"
      },PTA,N/A,${stamp},42,1,0,${ptr},"{size:4096}",,`,
    );
  }
  await same([write(lines.join("\n") + "\n")], "pickle");
});

/**
 * A log of several threads: rows rising in time but for a few stamped a
 * little late, some into a run of their own microsecond; runs of one
 * microsecond out of ID order before and after them; IDs repeated or not a
 * number; FREE rows of no device, so that the whole log is put in order
 * too, not just each device's rows. `far` rows lie thousands of rows from
 * their places; `fallEvery` sets how often a row is late.
 */
function nearlyRisingLog(seed: number, fallEvery: number, far = 0): string {
  const T = 1764753083997498000;
  const lines = [HEADER];
  const next = seeded(seed);
  const n = 40_000;
  const stamps = Array.from({ length: n }, (_, i) => T + i * 2000);
  const ids = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    // Runs of one microsecond: the next few rows share this one's stamp.
    if (next() % 9 === 0) {
      for (let k = 1; k <= 1 + next() % 4 && i + k < n; k++) {
        stamps[i + k] = stamps[i];
      }
    }
  }
  for (let i = 0; i < n; i++) {
    if (next() % fallEvery === 0 && i > 8) {
      // Late by 1-6 rows, half of them onto an earlier row's own stamp.
      const back = 1 + next() % 6;
      const onto = next() % 2 === 0;
      stamps[i] = onto ? stamps[i - back] : stamps[i - back] - 1000;
      // Onto a stamp, with an ID below the row's it joins: out of ID order.
      if (onto && next() % 2) ids.set(i, i - back - 2);
    }
  }
  for (let k = 0; k < far; k++) stamps[n - 1 - k * 997] = T + k * 500;
  for (let i = 0; i < n; i++) {
    const r = next() % 53;
    const id = ids.has(i)
      ? `${ids.get(i)}`
      : r === 0
      ? "N/A"
      : r === 1
      ? `${i - 1}`
      : `${i + (r % 3) - 1}`;
    const malloc = (i >> 1) % 2 === 0;
    const ptr = `0x${(0x12c000000000 + (i % 700) * 4096).toString(16)}`;
    lines.push(
      `${id},${malloc ? "MALLOC" : "FREE"},PTA,N/A,${stamps[i]},42,${
        1 + i % 3
      },${malloc || i % 5 ? i % 2 : "N/A"},${ptr},"{size:4096}",,`,
    );
  }
  return write(lines.join("\n") + "\n");
}

Deno.test("native snapshot orders a log that rises in time but for a few late rows as the TypeScript converter does: late rows into runs of their own time, ties, NaN IDs, rows far from their places, and too many late rows", async () => {
  for (const seed of [3, 5, 8]) {
    // About one late row in 150: put in place by insertion.
    await same([nearlyRisingLog(seed, 150)], "pickle");
    // One in 20: past FEW_FALLS, the general path.
    await same([nearlyRisingLog(seed, 20)], "pickle");
  }
  // Two late rows land before a run of one microsecond out of ID order,
  // which the insertion moves two places on: the run still sorted. Every
  // row a MALLOC of device 0, so that each is in the trace.
  const T = 1764753083997498000;
  const lines = [HEADER];
  let id = 0, t = T;
  const row = (stamp: number, i: number) =>
    lines.push(
      `${i},MALLOC,PTA,N/A,${stamp},42,1,0,0x${
        (0x12c000000000 + i * 4096).toString(16)
      },"{size:4096}",,`,
    );
  for (let block = 0; block < 300; block++) {
    row(t, id);
    row(t + 5000, id + 2);
    row(t + 5000, id + 1);
    row(t + 1000, id + 3);
    row(t + 2000, id + 4);
    id += 5;
    t += 10_000;
    for (let k = 0; k < 150; k++, t += 1000) row(t, id++);
  }
  // A late MALLOC lands in the microsecond of a FREE of its address with
  // no device, and its lower ID puts it first: the FREE is then its own,
  // on its device.
  for (let block = 0; block < 300; block++, id += 4) {
    const x = `0x${(0x13c000000000 + block * 4096).toString(16)}`;
    lines.push(
      `${id + 3},FREE,PTA,N/A,${t + 5000},42,1,N/A,${x},"{size:4096}",,`,
      `${id + 4},MALLOC,PTA,N/A,${t + 7000},42,1,0,${x}8,"{size:4096}",,`,
      `${id + 2},MALLOC,PTA,N/A,${t + 5000},42,1,1,${x},"{size:4096}",,`,
    );
    t += 10_000;
    for (let k = 0; k < 150; k++, t += 1000) row(t, id + 5 + k);
    id += 150;
  }
  await same([write(lines.join("\n") + "\n")], "pickle");
  // Rows a long way from their places: past the steps allowed, the
  // general path on a list partly in order.
  await same([nearlyRisingLog(13, 150, 30)], "pickle");
  await same([nearlyRisingLog(13, 150, 30)], "json");
});

/** Memory rows of pid 7, one a microsecond, and the log they make. */
function memoryRows() {
  const T = 1764753083997498000;
  const rows: string[] = [];
  const row = (
    event: string,
    type: string,
    device: string,
    ptr: number,
    size: number,
  ) => {
    const id = rows.length + 1;
    rows.push(
      `${id},${event},${type},N/A,${T + 1000 * id},7,7,${device},0x${
        ptr.toString(16).padStart(16, "0")
      },"{size:${size}}",,`,
    );
  };
  return { row, log: () => write(`${HEADER}\n${rows.join("\n")}\n`) };
}

/** Whole numbers below n, the same each run. */
function picker(seed: number): (n: number) => number {
  let x = seed;
  return (n) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x % n;
  };
}

Deno.test("native snapshot replays segments holding thousands of live blocks as the TypeScript converter does: blocks over blocks, frees of blocks it never saw, a segment freed and made again with its blocks live", async () => {
  const base = 0x124000000000;
  const { row, log: written } = memoryRows();
  const pick = picker(5);
  const live: number[] = [];
  for (let round = 0; round < 2; round++) {
    row("MALLOC", "HAL", "0", base, 2 ** 34);
    for (let k = 0; k < 12_000; k++) {
      if (live.length > 3_000 && pick(2)) {
        const i = pick(live.length);
        row("FREE", "PTA", pick(3) ? "0" : "N/A", live[i], 4096);
        live[i] = live[live.length - 1];
        live.pop();
      } else if (pick(50) === 0) {
        // Over a live block and its neighbours: frees the log lost.
        const at = live.length ? live[pick(live.length)] - 4096 : base;
        row("MALLOC", "PTA", "0", at, 3 * 8192);
      } else if (pick(80) === 0) {
        row("FREE", "PTA", "0", base + pick(1 << 20) * 4096 + 2048, 512);
      } else {
        const at = base + pick(1 << 20) * 8192;
        row("MALLOC", "PTA", "0", at, 512 * (1 + pick(16)));
        live.push(at);
      }
    }
    // Freed with its blocks live, then made again at the same address.
    row("FREE", "HAL", "0", base, 2 ** 34);
    live.length = 0;
  }
  row("MALLOC", "HAL", "0", base, 2 ** 34);
  row("MALLOC", "HAL", "0", base, 2 ** 34);
  const log = written();
  for (const [format, options] of VARIANTS) {
    assert.equal((await same([log], format, options)).error, undefined);
  }
});

// The replay looks rows ahead up in the blocks of the segment the rows
// before touched (replay.c hints): here that segment changes from row to
// row, between thousands of segments of their own and one holding
// thousands, while blocks land over others.
Deno.test("native snapshot replays thousands of blocks in segments of their own beside a segment holding thousands as the TypeScript converter does: blocks over blocks and inside others, either kind of segment", async () => {
  const base = 0x124000000000, span = 2 ** 30;
  const { row, log: written } = memoryRows();
  const pick = picker(9);
  const live: number[] = [];
  for (let k = 0; k < 30_000; k++) {
    if (k === 6_000) row("MALLOC", "HAL", "0", base + span / 2, span / 2);
    if (live.length > 4_000 && pick(2)) {
      const i = pick(live.length);
      row("FREE", "PTA", "0", live[i], 4096);
      live[i] = live[live.length - 1];
      live.pop();
    } else if (live.length && pick(40) === 0) {
      // Inside a live block, or over it and the next: frees the log lost.
      const at = live[pick(live.length)] + (pick(2) ? 512 : -512);
      row("MALLOC", "PTA", "0", at, pick(2) ? 256 : 8192);
      live.push(at);
    } else {
      const at = base + pick(span / 4096) * 4096;
      row("MALLOC", "PTA", "0", at, 512 * (1 + pick(8)));
      live.push(at);
    }
  }
  // Freed lowest first: each chunk of a segment's blocks empties in turn,
  // and those after it move down while the rows ahead are looked up.
  for (const at of live.sort((a, b) => a - b)) {
    row("FREE", "PTA", "0", at, 4096);
    if (pick(8) === 0) {
      row("MALLOC", "PTA", "0", base + pick(span / 4096) * 4096, 512);
    }
  }
  const log = written();
  for (const [format, options] of VARIANTS) {
    assert.equal((await same([log], format, options)).error, undefined);
  }
});

Deno.test("native snapshot keeps each device's rows in the order of the whole log where a device had to be resolved, as the TypeScript converter does, also where IDs that are not numbers tie in time with others", async () => {
  const T = 1764753083997498000;
  const logs = [
    [
      `9,MALLOC,PTA,N/A,${T},7,7,0,0x100000,"{size:512}",,`,
      `2.5,FREE,ATB,N/A,${T},7,7,,0x200000,"{size:512}",,`,
      `3,OOM_DETAIL,PTA,N/A,${T},7,7,0,N/A,"{size:999,device_free:1.5}",,`,
    ],
    [
      `9,MALLOC,PTA,N/A,${T},7,7,1,0x100000,"{size:512}",,`,
      `N/A,FREE,HAL,N/A,${T},7,7,0,0x900000,"{size:70656}",,`,
      `3,MALLOC,PTA,N/A,${T},7,7,1,0x100000,"{size:1024}",,`,
      `4,MALLOC,ATB,N/A,${T + 1000},7,7,host,0x500000,"{size:1}",,`,
    ],
  ];
  for (const rows of logs) {
    const log = write(`${HEADER}\n${rows.join("\n")}\n`);
    for (const [format, options] of VARIANTS) {
      assert.equal((await same([log], format, options)).error, undefined);
    }
  }
});

Deno.test("native snapshot reads a Device Id past 65,535 as N/A, as the TypeScript converter does: no snapshot of a million empty devices", async () => {
  const T = 1764753083997498000;
  const log = write(
    [
      HEADER,
      `1,MALLOC,HAL,N/A,${T},7,7,1048575,0x100000,"{size:512}",,`,
      `2,MALLOC,HAL,N/A,${T + 1},7,7,65536,0x200000,"{size:512}",,`,
      `3,FREE,HAL,N/A,${T + 2},7,7,65536,0x200000,"{size:512}",,`,
      `4,MALLOC,HAL,N/A,${T + 3},7,7,3,0x300000,"{size:512}",,`,
      "",
    ].join("\n"),
  );
  const r = await same([log]);
  assert.equal(
    (r.result as { summary: { devices: number } }).summary.devices,
    4,
  );
  await same([log], "json");
});

Deno.test("native snapshot puts a block in the live segment that reaches it where a segment nested in that one (a log that lost frees) starts later, as the TypeScript converter does", async () => {
  const T = 1764753083997498000;
  const rows = [
    `1,MALLOC,HAL,N/A,${T},7,7,0,0x0000000000100000,"{size:1048576}",,`,
    `2,MALLOC,HAL,N/A,${T + 1000},7,7,0,0x0000000000110000,"{size:4096}",,`,
    `3,MALLOC,PTA,N/A,${T + 2000},7,7,0,0x0000000000180000,"{size:512}",,`,
    `4,FREE,PTA,N/A,${T + 3000},7,7,0,0x0000000000190000,"{size:512}",,`,
  ];
  const log = write(`${HEADER}\n${rows.join("\n")}\n`);
  const r = await same([log]);
  // Its block in the outer segment: two live segments, not a third of its own.
  assert.equal(
    (r.result as { summary: { segments: number } }).summary.segments,
    2,
  );
  await same([log], "json");
});
