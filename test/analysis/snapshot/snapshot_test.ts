/**
 * `stompwatch snapshot` end to end: real logs (msMemScope's fixtures, our
 * own run's, hand-made ones) through the real command, every file checked
 * by Python's pickle and PyTorch's own _memory_viz.py (check_snapshot.py).
 */
import assert from "node:assert/strict";
import { EVENT_LOG_HEADER } from "../../../analysis/memscope_csv/mod.ts";
import {
  STOMPWATCH,
  stompwatch,
  tempDir,
  workload,
} from "../../e2e/_harness.ts";
import { writeMemscopeLog } from "../../../bench/_memscope_gen.ts";
import {
  createNewFile,
  partStemOf,
  systemReason,
} from "../../../analysis/snapshot/file.ts";
import { checkSnapshots, FIXTURES, fixtures } from "./_check.ts";

const MiB = 1 << 20;
const BASE = 0x12c000000000;

/** A log in our format from rows `[event, pool, ts, ptr, size, device?]`. */
function log(
  rows: Array<[string, string, number, number, number, string?]>,
): string {
  const path = `${tempDir()}/memscope_dump_20260101000000.csv`;
  const body = rows.map(([event, pool, ts, ptr, size, device], i) =>
    `${i + 1},${event},${pool},N/A,${1764753083997498000 + ts * 1000},7,7,${
      device ?? "0"
    },0x${ptr.toString(16).padStart(16, "0")},"{allocation_id:${i + 1},addr:0x${
      ptr.toString(16)
    },size:${size}}",,`
  );
  Deno.writeTextFileSync(path, [EVENT_LOG_HEADER, ...body, ""].join("\n"));
  return path;
}

async function snapshot(args: string[]) {
  return await stompwatch(["snapshot", ...args]);
}

Deno.test("snapshot converts every msMemScope fixture into a file Python's pickle and _memory_viz.py read, with the log's live bytes", async () => {
  assert.ok(fixtures.length >= 4, `fixtures missing in ${FIXTURES}`);
  const dir = tempDir();
  const files: string[] = [];
  for (const f of fixtures) {
    const name = f.split("/").pop()!.replace(".csv", "");
    for (const format of ["pickle", "json"]) {
      const out = `${dir}/${name}.${format}`;
      const r = await snapshot(["--input", f, "-o", out, "--format", format]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`wrote ${out}: \\d+ trace entries`));
      files.push(`${out}=${f}`);
    }
  }
  // One process of the two-rank file: it alone, checked against its own rows.
  const two = fixtures.find((f) => f.endsWith("two_ranks_a.csv"))!;
  const one = `${dir}/rank.pickle`;
  assert.equal(
    (await snapshot(["--input", two, "-o", one, "--pid", "2523740"])).code,
    0,
  );
  files.push(`${one}=${two}@2523740`);
  const results = await checkSnapshots(files);
  for (const r of results) assert.ok(r.ok, `${r.file}: ${r.error}`);
  const twoRanks = results.find((r) => r.file.endsWith("two_ranks_a.pickle"))!;
  // Devices 0 and 1, and host memory as the next device, as PyTorch puts CPU memory.
  assert.equal(twoRanks.devices, 3);
  assert.ok(twoRanks.trace_entries.every((n) => n > 0));
});

Deno.test("snapshot of a hand-made log: blocks tile their segment, _memory_viz.py's totals are the log's", async () => {
  const path = log([
    ["MALLOC", "HAL", 1, BASE, 4 * MiB],
    ["MALLOC", "PTA", 2, BASE, 1 * MiB],
    ["MALLOC", "PTA", 3, BASE + MiB, MiB / 2],
    ["FREE", "PTA", 4, BASE, 1 * MiB],
    ["MALLOC", "HAL", 5, BASE + 8 * MiB, 2 * MiB],
  ]);
  const out = `${tempDir()}/s.pickle`;
  const r = await snapshot(["--input", path, "-o", out]);
  assert.equal(r.code, 0, r.stderr);
  const [c] = await checkSnapshots([`${out}=${path}`]);
  assert.ok(c.ok, c.error);
  assert.equal(c.total_reserved, 6 * MiB);
  assert.equal(c.segsum_segments, 2);
  assert.equal(c.allocated, MiB / 2);
  // segment_alloc, alloc, alloc, free_requested, free_completed, segment_alloc
  assert.deepEqual(c.trace_entries, [6]);
  const snap = JSON.parse(
    new TextDecoder().decode(
      (await new Deno.Command("python3", {
        args: [
          "-c",
          `import pickle,json,sys;print(json.dumps(pickle.load(open(sys.argv[1],'rb'))))`,
          out,
        ],
        stdout: "piped",
      }).output()).stdout,
    ),
  );
  assert.deepEqual(
    snap.segments[0].blocks.map((
      b: { size: number; state: string },
    ) => [b.size, b.state]),
    [[MiB, "inactive"], [MiB / 2, "active_allocated"], [2.5 * MiB, "inactive"]],
  );
  assert.equal(snap.device_traces[0][0].time_us, 1764753083997499);
});

Deno.test("snapshot of a log that frees blocks and runtime allocations made before it began draws them as allocated before the trace", async () => {
  const path = log([
    ["FREE", "PTA", 1, BASE + 4096, 4096],
    ["MALLOC", "HAL", 2, BASE + 64 * MiB, MiB],
    ["FREE", "HAL", 3, BASE + 32 * MiB, 2 * MiB],
    ["MALLOC", "PTA", 4, BASE + 64 * MiB, 4096],
  ]);
  const out = `${tempDir()}/s.pickle`;
  const r = await snapshot(["--input", path, "-o", out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /2 frees of memory allocated before the log began/);
  const [c] = await checkSnapshots([`${out}=${path}`]);
  assert.ok(c.ok, c.error);
  assert.equal(c.allocated, 4096);
  assert.equal(c.total_reserved, MiB);
});

Deno.test("snapshot of an empty log still names device 0, which the viewer reads", async () => {
  const path = `${tempDir()}/memscope_dump_20260101000000.csv`;
  Deno.writeTextFileSync(path, EVENT_LOG_HEADER + "\n");
  const out = `${tempDir()}/s.pickle`;
  const r = await snapshot(["--input", path, "-o", out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /0 trace entries, 0 live segments, 1 device/);
  const [c] = await checkSnapshots([`${out}=${path}`]);
  assert.ok(c.ok, c.error);
  assert.equal(c.devices, 1);
});

Deno.test("snapshot --max-entries keeps the newest entries, never half a free, and says how many it dropped", async () => {
  const rows: Array<[string, string, number, number, number]> = [
    ["MALLOC", "HAL", 0, BASE, 64 * MiB],
  ];
  for (let i = 0; i < 50; i++) {
    rows.push(["MALLOC", "PTA", 2 * i + 1, BASE + i * MiB, MiB]);
    if (i % 2) rows.push(["FREE", "PTA", 2 * i + 2, BASE + i * MiB, MiB]);
  }
  const path = log(rows);
  const dir = tempDir();
  const all = await snapshot(["--input", path, "-o", `${dir}/all.pickle`]);
  assert.match(all.stdout, /wrote \S+: 101 trace entries/);
  // 101 entries: 1 segment_alloc, 50 allocs, 25 frees of two entries.
  const cut = await snapshot([
    "--input",
    path,
    "-o",
    `${dir}/cut.pickle`,
    "--max-entries",
    "29",
  ]);
  assert.equal(cut.code, 0, cut.stderr);
  // The 29 newest begin with a free_completed, whose free_requested is gone: it goes too.
  assert.match(cut.stdout, /wrote \S+: 28 trace entries/);
  assert.match(
    cut.stdout,
    /--max-entries 29 dropped the 73 oldest trace entries/,
  );
  const [a, c] = await checkSnapshots([
    `${dir}/all.pickle=${path}`,
    `${dir}/cut.pickle=${path}`,
  ]);
  assert.ok(a.ok, a.error);
  assert.ok(c.ok, c.error);
  assert.deepEqual(c.trace_entries, [28]);
  // The end state is the same: only history was dropped.
  assert.equal(c.allocated, a.allocated);
  assert.equal(c.allocated, 25 * MiB);
});

Deno.test("snapshot of our own run's event log: each runtime allocation a segment used whole", async () => {
  const out = tempDir();
  const r = await stompwatch(["run", "--output", out, "--", workload("marks")]);
  assert.equal(r.code, 0, r.stderr);
  const dir = `${out}/device_0`;
  const [name] = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
    n.startsWith("memscope_dump_")
  );
  const snap = `${tempDir()}/ours.pickle`;
  const s = await snapshot(["--input", `${dir}/${name}`, "-o", snap]);
  assert.equal(s.code, 0, s.stderr);
  const [c] = await checkSnapshots([`${snap}=${dir}/${name}`]);
  assert.ok(c.ok, c.error);
  // 5 MALLOC/FREE pairs: segment_alloc + alloc, free_requested + free_completed + segment_free.
  assert.deepEqual(c.trace_entries, [25]);
});

Deno.test("snapshot refuses bad input in one line, and never replaces a file", async () => {
  const path = log([["MALLOC", "HAL", 1, BASE, MiB]]);
  const dir = tempDir();
  const cases: Array<[string[], RegExp]> = [
    [
      ["-o", `${dir}/a.pickle`],
      /^stompwatch: Missing --input: give an event log/,
    ],
    [
      ["--input", path],
      /^stompwatch: Missing -o: give the snapshot file to write/,
    ],
    [
      ["--input", path, "-o", `${dir}/a`, "--format", "xml"],
      /^stompwatch: Invalid --format value: xml; use pickle \(default\) or json/,
    ],
    [
      ["--input", path, "-o", `${dir}/a`, "--max-entries", "-1"],
      /^stompwatch: Invalid --max-entries value: -1; give a whole number/,
    ],
    [
      ["--input", path, "-o", `${dir}/a`, "--device", "3"],
      /^stompwatch: No device 3 in the log: it names device 0; pick one with --device/,
    ],
    [
      ["--input", path, "-o", `${dir}/a`, "--pid", "99999"],
      /^stompwatch: No memory rows of pid 99999 in the log; leave out --pid, or give a pid of its Process Id column/,
    ],
    [
      ["--input", `${dir}/none.csv`, "-o", `${dir}/a`],
      /^stompwatch: Cannot read \S+none.csv: no such file/,
    ],
    [
      ["--input", path, "-o", `${dir}/a`, "--bogus"],
      /^stompwatch: Unknown option: --bogus; snapshot takes --input/,
    ],
    [
      ["--input", path, "-o", `${dir}/..`],
      /^stompwatch: Cannot write \S+\/\.\.: it names a directory, not a file; name a new file in it$/m,
    ],
    [
      ["--input", path, "-o", `${dir}/${"c".repeat(256)}`],
      /^stompwatch: Cannot write \S+: file name too long; pick a shorter name$/m,
    ],
    [
      ["--input", path, "-o", "/dev/stdout"],
      /^stompwatch: Cannot write \/dev\/stdout: stompwatch does not write files in \/dev \(devices and system places are refused\); name a new file in a directory of your own$/m,
    ],
  ];
  for (const [args, re] of cases) {
    const r = await snapshot(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.stderr, re);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
  // A size no pickle memory_viz reads can hold: JSON holds it.
  const wide = `${dir}/wide.csv`;
  Deno.writeTextFileSync(
    wide,
    `${EVENT_LOG_HEADER}\n1,MALLOC,HAL,N/A,1764753083997498000,7,7,0,0x100000,"{size:18446744073709551615}",,\n`,
  );
  const refused = await snapshot(["--input", wide, "-o", `${dir}/w.pickle`]);
  assert.equal(refused.code, 2);
  assert.equal(
    refused.stderr,
    "stompwatch: Cannot write 18446744073709552000: wider than 8 bytes; the log holds a number memory_viz reads from no pickle: write JSON instead with --format json\n",
  );
  const json = await snapshot([
    "--input",
    wide,
    "-o",
    `${dir}/w.json`,
    "--format",
    "json",
  ]);
  assert.equal(json.code, 0, json.stderr);
  assert.match(Deno.readTextFileSync(`${dir}/w.json`), /18446744073709552000/);
  Deno.removeSync(wide);
  Deno.removeSync(`${dir}/w.json`);
  const nowhere = await snapshot(["--input", path, "-o", `${dir}/no/a.pickle`]);
  assert.equal(nowhere.code, 2);
  assert.equal(
    nowhere.stderr,
    `stompwatch: Cannot write ${dir}/no/a.pickle: ${dir}/no does not exist; create it or pick another place\n`,
  );
  const comma = await snapshot(["--input", path, "-o", `${dir}/a,b.pickle`]);
  assert.equal(comma.code, 2);
  assert.match(
    comma.stderr,
    /^stompwatch: Cannot use -o \S+a,b\.pickle: its path holds a comma/,
  );
  const notLog = `${dir}/notes.csv`;
  Deno.writeTextFileSync(notLog, "a,b\n1,2\n");
  const bad = await snapshot(["--input", notLog, "-o", `${dir}/b.pickle`]);
  assert.equal(bad.code, 2);
  assert.doesNotMatch(bad.stderr, /1,2/);
  const kept = `${dir}/kept.pickle`;
  Deno.writeTextFileSync(kept, "precious");
  const again = await snapshot(["--input", path, "-o", kept]);
  assert.equal(again.code, 2);
  assert.match(
    again.stderr,
    /a file of that name exists and is never replaced; pick a new name/,
  );
  assert.equal(Deno.readTextFileSync(kept), "precious");
  // A name with a control character is printed escaped.
  const esc = await snapshot(["--input", path, "-o", `${dir}/e\x1b[2J`]);
  assert.equal(esc.code, 0, esc.stderr);
  assert.match(esc.stdout, /^stompwatch: wrote \S+\/e\\x1b\[2J: /);
  Deno.removeSync(`${dir}/e\x1b[2J`);
  // A name of 250 bytes: its part file takes a shorter name.
  const long = `${dir}/${"n".repeat(243)}.pickle`;
  const named = await snapshot(["--input", path, "-o", long]);
  assert.equal(named.code, 0, named.stderr);
  assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), [
    "kept.pickle",
    long.slice(dir.length + 1),
    "notes.csv",
  ]);
});

Deno.test("a snapshot file is made over a part file an earlier process of the same pid left, never over the file itself", async () => {
  const dir = tempDir();
  const path = `${dir}/s.json`;
  const part = `${partStemOf(path).stem}.part`;
  Deno.writeTextFileSync(part, "left by a killed process");
  const made = await createNewFile(path, (file) => {
    file.writeSync(new TextEncoder().encode("{}"));
  });
  assert.equal(made, undefined);
  assert.equal(Deno.readTextFileSync(path), "{}");
  assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["s.json"]);
  await assert.rejects(
    () => createNewFile(path, () => {}),
    /a file of that name exists and is never replaced/,
  );
  assert.equal(Deno.readTextFileSync(path), "{}");

  // Two writes at once in one process: of one path, one wins whole and the
  // other is refused; of two names too long for their own part names, both.
  const write = (to: string, text: string) =>
    createNewFile(to, async (file) => {
      await new Promise((r) => setTimeout(r, 20));
      file.writeSync(new TextEncoder().encode(text));
    });
  const both = await Promise.allSettled([
    write(`${dir}/t.json`, "first"),
    write(`${dir}/t.json`, "second"),
  ]);
  assert.deepEqual(both.map((r) => r.status).sort(), ["fulfilled", "rejected"]);
  const won = both[0].status === "fulfilled" ? "first" : "second";
  assert.equal(Deno.readTextFileSync(`${dir}/t.json`), won);
  const [a, b] = ["a", "b"].map((c) => `${dir}/${c.repeat(245)}`);
  await Promise.all([write(a, "a"), write(b, "b")]);
  assert.deepEqual([a, b].map((f) => Deno.readTextFileSync(f)), ["a", "b"]);
  assert.deepEqual(
    [...Deno.readDirSync(dir)].filter((e) => e.name.endsWith(".part")),
    [],
  );
});

Deno.test("a file that cannot be written is refused with what the system said and what to do, without Deno's error numbers", () => {
  const cases: Array<[string, string]> = [
    [
      "No space left on device (os error 28)",
      "no space left on device; free some space or pick another place",
    ],
    [
      "Read-only file system (os error 30): open '/mnt/x'",
      "read-only file system; pick a place that can be written",
    ],
    [
      "File name too long (os error 36): lstat '/tmp/cccc'",
      "file name too long; pick a shorter name",
    ],
    ["Input/output error (os error 5)", "input/output error"],
  ];
  for (const [message, said] of cases) {
    assert.equal(systemReason(new Error(message)), said);
  }
});

Deno.test("snapshot stopped by Ctrl-C or a kill while it writes leaves neither the snapshot nor its part file", async () => {
  const dir = tempDir();
  const input = `${dir}/big.csv`;
  await writeMemscopeLog(input, 400_000);
  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    const out = `${dir}/s_${signal}.pickle`;
    const child = new Deno.Command(STOMPWATCH, {
      args: ["snapshot", "--input", input, "-o", out],
      stdout: "null",
      stderr: "null",
    }).spawn();
    // Signalled once the part file is there, while the rows are converted.
    let seen = false;
    const deadline = Date.now() + 20_000;
    while (!seen && Date.now() < deadline) {
      seen = [...Deno.readDirSync(dir)].some((e) => e.name.endsWith(".part"));
      if (!seen) await new Promise((r) => setTimeout(r, 1));
    }
    assert.ok(seen, `no part file appeared before ${signal}`);
    child.kill(signal);
    assert.equal((await child.status).code, code, signal);
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), [
      "big.csv",
    ]);
  }
});

Deno.test("check_snapshot.py catches what the viewer throws on", async () => {
  const dir = tempDir();
  const bad = (name: string, snap: unknown) => {
    Deno.writeTextFileSync(`${dir}/${name}`, JSON.stringify(snap));
    return `${dir}/${name}`;
  };
  const seg = (blocks: Array<[number, string]>, total: number) => ({
    device: 0,
    address: 4096,
    total_size: total,
    stream: 0,
    segment_type: "small",
    allocated_size: blocks.filter(([, s]) => s === "active_allocated").reduce(
      (a, [n]) => a + n,
      0,
    ),
    active_size: 0,
    requested_size: 0,
    frames: [],
    blocks: blocks.reduce((acc: unknown[], [size, state], i) => {
      const address = 4096 + blocks.slice(0, i).reduce((a, [n]) => a + n, 0);
      return [...acc, {
        address,
        size,
        requested_size: size,
        state,
        frames: [],
      }];
    }, []),
  });
  const entry = (action: string, addr: number, size: number) => ({
    action,
    addr,
    size,
    stream: 0,
    time_us: 1,
    frames: [],
  });
  const files = [
    bad("gap.json", {
      segments: [seg([[100, "active_allocated"]], 200)],
      device_traces: [[]],
    }),
    bad("outside.json", {
      segments: [],
      device_traces: [[
        entry("alloc", 1, 8),
        entry("free_requested", 1, 8),
        entry("free_completed", 1, 8),
        entry("alloc", 64, 8),
      ]],
    }),
    bad("half_free.json", {
      segments: [seg([[100, "active_allocated"]], 100)],
      device_traces: [[entry("free_requested", 4096, 100)]],
    }),
    bad("category.json", {
      segments: [],
      device_traces: [[{ ...entry("alloc", 4096, 1), category: "PARAMETER" }]],
    }),
    bad("no_device.json", { segments: [], device_traces: [] }),
  ];
  const pickled = `${dir}/p5.pickle`;
  await new Deno.Command("python3", {
    args: [
      "-c",
      `import pickle,sys;open(sys.argv[1],'wb').write(pickle.dumps({'segments':[],'device_traces':[[]]},protocol=5))`,
      pickled,
    ],
  }).output();
  const results = await checkSnapshots([...files, pickled]);
  assert.deepEqual(
    results.map((r) => r.ok),
    files.map(() => false).concat([false]),
  );
  assert.match(results[0].error!, /blocks add up to 100, not 200/);
  assert.match(results[1].error!, /outside every segment/);
  assert.match(results[2].error!, /free_requested not followed/);
  assert.match(results[3].error!, /'unknown'/);
  assert.match(results[4].error!, /at least one device/);
  assert.match(results[5].error!, /not protocol 4/);
});

Deno.test("snapshot gives each block the frames of its row's Python and C stacks", async () => {
  const path = `${tempDir()}/memscope_dump_20260101000000.csv`;
  Deno.writeTextFileSync(
    path,
    [
      EVENT_LOG_HEADER,
      `1,MALLOC,HAL,N/A,1764753083997498000,7,7,0,0x0000000000100000,"{addr:0x100000,size:4096}",,`,
      `2,MALLOC,PTA,N/A,1764753083997499000,7,7,0,0x0000000000100000,"{addr:0x100000,size:512}","model.py(40): forward
train.py(12): step","libtorch.so:7 at::empty"`,
      "",
    ].join("\n"),
  );
  const out = `${tempDir()}/s.pickle`;
  assert.equal((await snapshot(["--input", path, "-o", out])).code, 0);
  const [c] = await checkSnapshots([`${out}=${path}`]);
  assert.ok(c.ok, c.error);
  const py = await new Deno.Command("python3", {
    args: [
      "-W",
      "ignore",
      "-c",
      "import pickle,sys; from torch.cuda import _memory_viz as mv; print(mv.memory(pickle.load(open(sys.argv[1],'rb')), format_flamegraph=lambda s: s))",
      out,
    ],
    stdout: "piped",
  }).output();
  // _memory_viz.py's own flamegraph line, outermost frame first: the
  // Python frames (written innermost first, as msMemScope writes them)
  // from the outside in, then the C backtrace's innermost frame.
  assert.match(
    new TextDecoder().decode(py.stdout),
    /^stream_0;active_allocated;train\.py:12:step;model\.py:40:forward;libtorch\.so:7:at::empty 512$/m,
  );
});

Deno.test("snapshot refers to frames written before by their memo index past 255 too", async () => {
  const rows = [EVENT_LOG_HEADER];
  for (let i = 1; i <= 300; i++) {
    const ptr = (0x100000 + i * 4096).toString(16).padStart(16, "0");
    rows.push(
      `${i},MALLOC,HAL,N/A,${
        1764753083997498000 + i * 1000
      },7,7,0,0x${ptr},"{addr:0x${ptr},size:64}","train.py(${i}): step",`,
    );
  }
  // Each stack again, now referred to by its memo index.
  for (let i = 1; i <= 300; i++) {
    const ptr = (0x100000 + i * 4096).toString(16).padStart(16, "0");
    rows.push(
      `${300 + i},FREE,HAL,N/A,${
        1764753083998498000 + i * 1000
      },7,7,0,0x${ptr},"{addr:0x${ptr},size:64}","train.py(${i}): step",`,
    );
  }
  const path = `${tempDir()}/memscope_dump_20260101000000.csv`;
  Deno.writeTextFileSync(path, rows.join("\n") + "\n");
  const out = `${tempDir()}/s.pickle`;
  assert.equal((await snapshot(["--input", path, "-o", out])).code, 0);
  const [c] = await checkSnapshots([`${out}=${path}`]);
  assert.ok(c.ok, c.error);
  const py = await new Deno.Command("python3", {
    args: [
      "-c",
      "import pickle,sys; t=pickle.load(open(sys.argv[1],'rb'))['device_traces'][0]; print(all(e['frames'][0]['line']==(k//2+1 if k<600 else (k-600)//3+1) for k,e in enumerate(t)))",
      out,
    ],
    stdout: "piped",
  }).output();
  assert.equal(new TextDecoder().decode(py.stdout).trim(), "True");
});

Deno.test("snapshot warns, naming --max-entries, when a browser would struggle with the file, and not once the flag keeps it small", async () => {
  // 120,001 runtime allocations and frees: 5 entries each, over 600,000.
  const rows = [EVENT_LOG_HEADER];
  const n = 120_001;
  for (let i = 0; i < n; i++) {
    const ptr = (0x100000000 + i * 4096).toString(16).padStart(16, "0");
    const attr = `"{addr:0x${ptr},size:4096}",,`;
    rows.push(
      `${2 * i + 1},MALLOC,HAL,N/A,${
        1764753083997498000 + 2000 * i
      },7,7,0,0x${ptr},${attr}`,
      `${2 * i + 2},FREE,HAL,N/A,${
        1764753083997499000 + 2000 * i
      },7,7,0,0x${ptr},${attr}`,
    );
  }
  const path = `${tempDir()}/memscope_dump_20260101000000.csv`;
  Deno.writeTextFileSync(path, rows.join("\n") + "\n");
  const dir = tempDir();
  const big = await snapshot(["--input", path, "-o", `${dir}/big.pickle`]);
  assert.equal(big.code, 0, big.stderr);
  assert.match(big.stdout, new RegExp(`wrote \\S+: ${5 * n} trace entries`));
  assert.match(
    big.stderr,
    /^stompwatch: warning: \S+big\.pickle has 600005 trace entries \(\d+ MiB\); browsers struggle past about 600,000 entries or 1 GB: keep the newest with --max-entries 500000/,
  );
  /** A snapshot of `input` kept to `entries` a device: no warning. */
  const kept = async (input: string, name: string, entries: number) => {
    const r = await snapshot([
      "--input",
      input,
      "-o",
      `${dir}/${name}`,
      "--max-entries",
      String(entries),
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    return r;
  };
  const small = await kept(path, "small.pickle", 500000);
  assert.match(small.stdout, /dropped the 100005 oldest trace entries/);
  // Two devices: --max-entries counts each one's, so it names half.
  const two = `${tempDir()}/memscope_dump_20260101000001.csv`;
  const odd = (i: number) => i > 0 && Math.floor((i - 1) / 2) % 2 === 1;
  Deno.writeTextFileSync(
    two,
    rows.map((r, i) => odd(i) ? r.replace(",7,7,0,", ",7,7,1,") : r)
      .join("\n") + "\n",
  );
  const both = await snapshot(["--input", two, "-o", `${dir}/two.pickle`]);
  assert.equal(both.code, 0, both.stderr);
  assert.match(
    both.stderr,
    /keep the newest with --max-entries 250000 \(a device\), or pick one device with --device/,
  );
  await kept(two, "halves.pickle", 250000);
});

Deno.test("snapshot leaves out and counts a row whose address no device has (past 2^53), and writes the rest", async () => {
  const path = `${tempDir()}/memscope_dump_20260101000000.csv`;
  Deno.writeTextFileSync(
    path,
    [
      EVENT_LOG_HEADER,
      `1,MALLOC,HAL,N/A,1764753083997498000,7,7,0,0xfffffffffffff000,"{size:4096}",,`,
      `2,MALLOC,HAL,N/A,1764753083997499000,7,7,0,0x0000000000100000,"{size:4096}",,`,
      "",
    ].join("\n"),
  );
  const out = `${tempDir()}/s.pickle`;
  const r = await snapshot(["--input", path, "-o", out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /: 2 trace entries, 1 live segment, 1 device/);
  assert.match(
    r.stdout,
    /1 rows left out \(no address or size, an address past 2\^53/,
  );
  // Not checked against the CSV's own live bytes, which count that row.
  const [c] = await checkSnapshots([out]);
  assert.ok(c.ok, c.error);
  assert.equal(c.allocated, 4096);
});
