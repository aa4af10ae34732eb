/**
 * The Python client end to end: real PyTorch jobs (test/python/*.py) under
 * the real ./stompwatch run, with the hook preloaded, and what the daemon
 * wrote for them.
 *
 * @module
 */
import assert from "node:assert/strict";
import { nativeChecksum, RING } from "../../ffi/bindings.ts";
import { root, runPython, script, SGD_STEP_OP } from "./_python.ts";
import {
  checksumRows,
  eventually,
  floats,
  requestSocket,
  startDaemonProcess,
  stompwatch,
  tempDir,
} from "./_harness.ts";

interface Change {
  op: string;
  call_count: number;
  allowed: boolean;
}
interface Watch {
  name: string;
  stomp: boolean;
  first_change: { op: string; call_count: number } | null;
  changes: Change[];
  unread_samples?: number;
}

function report(out: string): Map<string, Watch> {
  const json = JSON.parse(
    Deno.readTextFileSync(`${out}/watch_dump/watch_report.json`),
  ) as { watches: Watch[] };
  return new Map(json.watches.map((w) => [w.name, w]));
}

function ops(w: Watch): Array<[string, number, boolean]> {
  return w.changes.map((c) => [c.op, c.call_count, c.allowed]);
}

/**
 * The two ways a watched block is read: in place (CPU tensors), or copied
 * to the host first by the client's copier (the path of CUDA tensors; here
 * CPU tensors posing as device memory).
 */
const MEMORIES = [
  ["host memory the hook reads in place", {}],
  ["device memory the client's copier copies", {
    STOMPWATCH_TEST_DEVICE_COPY: "1",
  }],
] as const;

for (const [memory, env] of MEMORIES) {
  Deno.test(`a custom op writing past its output into a watched neighbour is a stomp at that call; SGD's in-place update of a watched weight is not (${memory})`, async () => {
    const r = await runPython("stomp_training.py", [], env);
    assert.deepEqual(r.code, 0, r.stderr);
    const watches = report(r.out);
    const op = "torch._ops.swtest.scale_into.default";
    const neighbour = watches.get("neighbour")!;
    assert.deepEqual(neighbour.stomp, true);
    assert.deepEqual(neighbour.first_change?.op, op);
    assert.deepEqual(neighbour.first_change?.call_count, 3);
    // The straddling block overlaps the op's output: its first change, inside
    // the output, is allowed; the byte past the output's end is not.
    const straddle = watches.get("straddle")!;
    assert.deepEqual(ops(straddle), [[op, 1, true], [op, 3, false]]);
    assert.deepEqual(straddle.stomp, true);
    const weight = watches.get("weight")!;
    assert.deepEqual(weight.stomp, false);
    assert.deepEqual(weight.changes.length, 4);
    for (const c of weight.changes) {
      assert.deepEqual([c.op, c.allowed], [SGD_STEP_OP, true]);
    }
    assert.match(
      r.stderr,
      /watch neighbour .*STOMPED by torch\._ops\.swtest\.scale_into\.default #3, which was not allowed to write it/,
    );
    assert.match(
      r.stderr,
      /watch straddle .*STOMPED by torch\._ops\.swtest\.scale_into\.default #3, which changed bytes of it beside the part it may write/,
    );
  });
}

Deno.test("a block of several copier chunks is checksummed outside the op's output across the chunks: a write past the output, in the next chunk, is a stomp", async () => {
  const r = await runPython("device_chunks.py", ["--events", "launch"], {
    STOMPWATCH_TEST_DEVICE_COPY: "1",
  });
  assert.equal(r.code, 0, r.stderr);
  const op = "torch._ops.swchunks.fill_into.default";
  const big = report(r.out).get("big")!;
  assert.deepEqual(ops(big), [[op, 1, true], [op, 2, false]]);
  assert.equal(big.stomp, true);
  // Pipelined, as a copy engine is fed: three chunks queued ahead.
  assert.match(r.stdout, /copies in flight at most: 3\n/);
});

Deno.test("a block watched by address and length sees the in-place op inside it, not the one beside it, and bad blocks are refused", async () => {
  const r = await runPython("address_watch.py");
  assert.deepEqual(r.code, 0, r.stderr);
  const block = report(r.out).get("block")!;
  assert.deepEqual(ops(block), [["torch._ops.aten.add_.Tensor", 1, true]]);
  assert.deepEqual(block.stomp, false);
  const refused = r.stdout.split("\n").filter((l) => l.startsWith("refused:"));
  assert.deepEqual(refused.length, 2, r.stdout);
  for (const l of refused) assert.match(l, /is not inside one live allocation/);
  const rows = checksumRows(`${r.out}/watch_dump`).map(([info]) => info);
  assert(
    rows.some((info) =>
      /^0_\d+_torch\._ops\.aten\.add_\.Tensor_1-block_0_after$/.test(info)
    ),
    rows.join("\n"),
  );
});

Deno.test("every bad argument of the Python API is a ValueError or TypeError naming the limit", async () => {
  const r = await runPython("bad_arguments.py");
  assert.deepEqual(r.code, 0, r.stderr);
  assert.match(r.stderr, /Ran 6 tests/);
});

Deno.test("a script written for msMemScope's API runs unchanged under --as-msmemscope", async () => {
  const r = await runPython("msmemscope_script.py", ["--as-msmemscope"]);
  assert.deepEqual(r.code, 0, r.stderr);
  assert.match(r.stdout, /analyzers \['leaks'\]\nok/);
  // dump_nums=2: the mul_ and the add_, before and after; not the sub_.
  const rows = checksumRows(`${r.out}/watch_dump`).map(([info]) =>
    info.replace(/^0_\d+_/, "")
  );
  assert.deepEqual(rows, [
    "torch._ops.aten.mul_.Tensor_1-test_0_before",
    "torch._ops.aten.mul_.Tensor_1-test_0_after",
    "torch._ops.aten.add_.Tensor_1-test_0_before",
    "torch._ops.aten.add_.Tensor_1-test_0_after",
  ]);
  const log = Deno.readTextFileSync(
    `${r.out}/device_0/${[...Deno.readDirSync(`${r.out}/device_0`)][0].name}`,
  );
  assert.deepEqual(log.match(/,MSTX,Range_start,step start,/g)?.length, 2);
  // Watched Aten ops are msMemScope's OP_LAUNCH rows, start and end. (The
  // sub_ after the watch closed may or may not be bracketed: the hook sees
  // the table change at the next op.)
  assert.deepEqual(
    log.match(
      /,OP_LAUNCH,ATEN_(START|END),torch\._ops\.aten\.(mul|add)_\.Tensor,/g,
    ),
    [
      ",OP_LAUNCH,ATEN_START,torch._ops.aten.mul_.Tensor,",
      ",OP_LAUNCH,ATEN_END,torch._ops.aten.mul_.Tensor,",
      ",OP_LAUNCH,ATEN_START,torch._ops.aten.add_.Tensor,",
      ",OP_LAUNCH,ATEN_END,torch._ops.aten.add_.Tensor,",
    ],
  );
  // config(call_stack="python:4") fills their Call Stack(Python).
  for (const [op, line] of [["mul_", 12], ["add_", 13]]) {
    assert.match(
      log,
      new RegExp(
        `,OP_LAUNCH,ATEN_END,torch\\._ops\\.aten\\.${op}\\.Tensor,[^\\n]*,N/A,,[^,\\n]*msmemscope_script\\.py\\(${line}\\): <module>,\n`,
      ),
    );
  }
});

Deno.test("without a daemon the client imports with the standard library only and fails fast, saying how to start one", async () => {
  const out = await new Deno.Command("python3", {
    args: ["-m", "unittest", "test_no_daemon"],
    cwd: `${root}test/python`,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.deepEqual(out.code, 0, stderr);
  assert.match(stderr, /Ran 4 tests/);
});

function eventLog(out: string): string {
  const dir = `${out}/device_0`;
  return `${dir}/${[...Deno.readDirSync(dir)][0].name}`;
}

Deno.test("check-leaks --event-type HOST finds exactly the tensor a training loop keeps alive each step, from the CLI and from Python", async () => {
  const r = await runPython("leaky_loop.py");
  assert.equal(r.code, 0, r.stderr);
  const kept = JSON.parse(/^kept (.*)$/m.exec(r.stdout)![1]) as number[];
  assert.equal(kept.length, 5);
  // The job checked its own log before exiting: marks 3, 4, 5 bound step 3.
  assert.match(
    r.stdout,
    new RegExp(`^own log leaks \\['0x0*${kept[3].toString(16)}'\\]$`, "m"),
  );
  const log = eventLog(r.out);
  for (let i = 0; i < 4; i++) {
    const c = await stompwatch([
      "check-leaks",
      "--input",
      log,
      "--mstx-info",
      "step",
      "--start-index",
      String(i),
      "--event-type",
      "HOST",
      "--json",
    ]);
    assert.equal(c.code, 1, c.stderr);
    const result = JSON.parse(c.stdout) as {
      devices: Array<
        { device: string; leaks: Array<{ ptr: string; bytes: number }> }
      >;
    };
    const leaks = result.devices.flatMap((d) =>
      d.leaks.map((l) => [d.device, Number(l.ptr), l.bytes])
    );
    assert.deepEqual(leaks, [["cpu", kept[i], 777 * 4]]);
  }
  const py = await new Deno.Command("python3", {
    args: [
      "-c",
      `import stompwatch; print(stompwatch.check_leaks(${
        JSON.stringify(log)
      }, "step", 2, event_type="HOST"))`,
    ],
    env: { PYTHONPATH: `${root}clients/python` },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(py.stdout);
  assert.equal(py.code, 0, new TextDecoder().decode(py.stderr));
  assert.match(
    text,
    /Detected memory leaks on device cpu ======\nDirect HOST memory leak of 0\.00296\d* Mb\(s\) at 0x[0-9a-f]{16} in Index \d+\./,
  );
  assert.match(
    text,
    new RegExp(`'ptr': '0x0*${kept[2].toString(16)}', 'bytes': 3108`),
  );
});

Deno.test("tensor memory rows carry the op that made them, nested describer owners and the Python call stack", async () => {
  const r = await runPython("leaky_loop.py", ["--call-stack", "python:2"]);
  assert.equal(r.code, 0, r.stderr);
  const rows = Deno.readTextFileSync(eventLog(r.out)).split("\n");
  const malloc = (op: string) =>
    rows.filter((l) => l.includes(`,MALLOC,HOST,${op},`));
  const [weight] = malloc("torch._ops.aten.randn.default");
  assert.match(
    weight,
    /,cpu,0x[0-9a-f]{16},"\{allocation_id:1,addr:0x[0-9a-f]{16},size:16384,owner:model@encoder,used:16384\}",.*leaky_loop\.py\(17\): <module>,$/,
  );
  const [bias] = malloc("torch._ops.aten.zeros.default");
  assert.match(bias, /size:256,owner:model,used:/);
  // A decorated function's allocations, and nothing after its tag closed.
  assert.equal(malloc("torch._ops.aten.mul.Tensor").length, 5);
  for (const row of malloc("torch._ops.aten.mul.Tensor")) {
    assert.match(row, /owner:loss,/);
    assert.match(
      row,
      /leaky_loop\.py\(31\): loss_of;[^;]*leaky_loop\.py\(39\): <module>,$/,
    );
  }
  for (const row of malloc("torch._ops.aten.full.default")) {
    assert.doesNotMatch(row, /owner:/);
  }
  // Each storage once: frees match mallocs, and views made no rows.
  const frees = rows.filter((l) => l.includes(",FREE,HOST,")).length;
  const mallocs = rows.filter((l) => l.includes(",MALLOC,HOST,")).length;
  assert.ok(frees > 0 && frees < mallocs, `${mallocs} mallocs, ${frees} frees`);
});

Deno.test("ACCESS rows name the op, the tensor and whether it was read or written; with nothing to do the dispatch mode is not installed", async () => {
  const r = await runPython("access_rows.py", [
    "--events",
    "launch",
    "--call-stack",
    "python:1",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^idle False\nwatching True\nremoved False\nstopped False\naccess True\noff False\n/,
  );
  // Sparse and meta tensors were recorded around, not failed on.
  assert.doesNotMatch(r.stderr, /stompwatch: cannot|Traceback/);
  const [a, b, c] = /^ptrs (\d+) (\d+) (\d+)$/m.exec(r.stdout)!.slice(1).map(
    (p) => "0x" + Number(p).toString(16).padStart(16, "0"),
  );
  const dir = `${r.out}/host`;
  const rows = Deno.readTextFileSync(
    `${dir}/${[...Deno.readDirSync(dir)][0].name}`,
  ).split("\n").filter((l) => l.includes(",ACCESS,")).map((l) =>
    l.split(",").slice(1)
  );
  const attr = '"{dtype:torch.float32';
  const fields = rows.map((f) => [f[1], f[2], f[7], f[8]]);
  assert.deepEqual(fields, [
    ["WRITE", "torch._ops.aten.add_.Tensor", a, attr],
    ["READ", "torch._ops.aten.add_.Tensor", b, attr],
    ["READ", "torch._ops.aten.mul.Tensor", a, attr],
    ["READ", "torch._ops.aten.mul.Tensor", b, attr],
    ["WRITE", "torch._ops.aten.mul.Tensor", c, attr],
  ]);
  for (const f of rows) {
    assert.deepEqual(f.slice(9, 11), ["shape:4x3", 'size:48}"']);
    assert.match(f[11], /access_rows\.py\(2[89]\): <module>/);
  }
});

Deno.test("a job started without run attaches to a running daemon with connect() and is watched", async () => {
  const out = tempDir();
  const daemon = await startDaemonProcess(out);
  try {
    const env: Record<string, string> = {
      PYTHONPATH: `${root}clients/python`,
    };
    const job = await new Deno.Command("python3", {
      args: [script("connected.py"), out],
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(
      job.code,
      0,
      new TextDecoder().decode(job.stderr),
    );
    const r = await requestSocket(`${out}/stompwatch.sock`, "GET", "/watches");
    const [w] = (r.body as { watches: Watch[] }).watches;
    assert.equal(w.name, "t");
    assert.deepEqual(ops(w), [["torch._ops.aten.copy_.default", 1, true]]);
    // The tensor it kept is a MALLOC row of the op that made it.
    const kept = BigInt(
      /^kept (0x[0-9a-f]+)$/m.exec(new TextDecoder().decode(job.stdout))![1],
    );
    await eventually(() => {
      const dir = `${out}/device_0`;
      const rows = [...Deno.readDirSync(dir)].flatMap((e) =>
        Deno.readTextFileSync(`${dir}/${e.name}`).split("\n")
      );
      return rows.some((l) => {
        const f = l.split(",");
        return f[1] === "MALLOC" && f[3] === "torch._ops.aten.mul.Tensor" &&
          BigInt(f[8]) === kept;
      }) || undefined;
    });
    // What `env` prints for a job started by hand includes the client.
    const env2 = await stompwatch(["env", "--output", out]);
    assert.match(
      env2.stdout,
      new RegExp(
        `^export PYTHONPATH='${root}clients/python/autostart:${root}clients/python'"\\$\\{PYTHONPATH:\\+:\\$PYTHONPATH\\}"$`,
        "m",
      ),
    );
    assert.match(
      env2.stdout,
      new RegExp(`^export STOMPWATCH_SOCKET='${out}/stompwatch.sock'$`, "m"),
    );
  } finally {
    daemon.child.kill("SIGTERM");
    await daemon.done;
  }
});

Deno.test("run refuses a bad --events or --call-stack value with one line saying what it takes", async () => {
  for (
    const [args, message] of [
      [
        ["--events", "alloc,bogus"],
        /^stompwatch: Invalid --events value: alloc,bogus; use a comma-separated list of alloc, free, launch, access\n$/,
      ],
      [
        ["--call-stack", "java:3"],
        /^stompwatch: Invalid --call-stack value: java:3; use python:N and\/or c:N, N from 0 to 1000\n$/,
      ],
      [
        ["--call-stack", "python:5000"],
        /Invalid --call-stack value: python:5000/,
      ],
    ] as const
  ) {
    const r = await stompwatch(["run", ...args, "--", "true"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, message);
  }
});

Deno.test("device memory the runtime cannot copy is copied to the host by the client's copier and checksummed the same", async () => {
  const r = await runPython("device_copy.py", ["--events", "launch"], {
    STOMPWATCH_TEST_DEVICE_COPY: "1",
  });
  assert.equal(r.code, 0, r.stderr);
  const hex = (b: Uint8Array) =>
    nativeChecksum(RING.CHECKSUM_XXH3, b).toString(16).padStart(16, "0");
  const zeros = hex(floats(64, 0)), ones = hex(floats(64, 1));
  const rows = checksumRows(`${r.out}/watch_dump`).map((
    [info, sum],
  ) => [info.replace(/^0_\d+_/, ""), sum]);
  assert.deepEqual(rows, [
    ["torch._ops.aten.add_.Tensor_1-dev_0_before", zeros],
    ["torch._ops.aten.add_.Tensor_1-dev_0_after", ones],
    ["torch._ops.aten.add_.Tensor_2-dev_0_before", ones],
    ["torch._ops.aten.add_.Tensor_2-dev_0_after", ones],
  ]);
  assert.match(r.stdout, /copier holds a storage: False\n/);
  const log = Deno.readTextFileSync(eventLog(r.out));
  assert.match(
    log,
    /,MALLOC,PTA,N\/A,\d+,\d+,\d+,0,0x[0-9a-f]{16},"\{allocation_id:1,[^"]*size:256,/,
  );
});

Deno.test("ops TorchScript runs on its inter-op threads are sampled through the copier, each sample following the last", async () => {
  const r = await runPython("device_forked.py", [], {
    STOMPWATCH_TEST_DEVICE_COPY: "1",
  });
  assert.equal(r.code, 0, r.stderr);
  const sums = checksumRows(`${r.out}/watch_dump`).map(([, sum]) => sum);
  assert.equal(sums.length, 8, sums.join(" "));
  const hex = (b: Uint8Array) =>
    nativeChecksum(RING.CHECKSUM_XXH3, b).toString(16).padStart(16, "0");
  const bytes = new Uint8Array(9 << 20);
  for (let call = 0; call < 4; call++) {
    assert.equal(sums[2 * call], hex(bytes), `before call ${call + 1}`);
    bytes.fill(call + 1);
    assert.equal(sums[2 * call + 1], hex(bytes), `after call ${call + 1}`);
  }
});

Deno.test("a Ctrl-C that reaches the client's copier is raised in the job once its op is over, with no traceback from ctypes", async () => {
  const r = await runPython("device_interrupt.py", [], {
    STOMPWATCH_TEST_DEVICE_COPY: "1",
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split("\n"), [
    "round 1 interrupted, t[0] = 1.0",
    "round 2 interrupted, t[0] = 2.0",
    "done, t[0] = 3.0",
  ]);
  assert.doesNotMatch(r.stderr, /Traceback|Exception ignored/);
});

Deno.test("full content of device memory the copier copies: the .bin files hold the block's exact bytes, across ring records and a ragged end", async () => {
  const r = await runPython("device_full_content.py", [], {
    STOMPWATCH_TEST_DEVICE_COPY: "1",
  });
  assert.equal(r.code, 0, r.stderr);
  const dir = `${r.out}/watch_dump`;
  const names = [...Deno.readDirSync(dir)].map((e) => e.name);
  const bin = (phase: string) => {
    const name = names.find((n) =>
      new RegExp(
        `^0_\\d+_torch\\._ops\\.aten\\.add_\\.Tensor_1-dev_0_${phase}\\.bin$`,
      )
        .test(n)
    );
    assert.ok(name, `no ${phase} dump in ${names.join(" ")}`);
    return Deno.readFileSync(`${dir}/${name}`);
  };
  const before = new Uint8Array(
    Int32Array.from({ length: (5 << 20) + 3 }, (_, i) => i).buffer,
  );
  // Where two 20 MiB arrays first differ: assert's own diff of them would
  // print (and build) megabytes.
  const firstDifference = (got: Uint8Array, want: Uint8Array) =>
    got.length === want.length
      ? got.findIndex((b, i) => b !== want[i])
      : Math.min(got.length, want.length);
  assert.equal(firstDifference(bin("before"), before), -1);
  assert.equal(
    firstDifference(bin("after"), before.map((b) => (b + 1) & 0xff)),
    -1,
  );
});

Deno.test("a runtime op launched inside an Aten op is sampled as part of it: the change is the Aten op's", async () => {
  const r = await runPython("nested_runtime_op.py");
  assert.equal(r.code, 0, r.stderr);
  const w = report(r.out).get("device_block")!;
  assert.deepEqual(ops(w), [[
    "torch._ops.swnest.launch_fill.default",
    1,
    false,
  ]]);
  assert.equal(w.stomp, true);
  const log = Deno.readTextFileSync(eventLog(r.out));
  assert.match(
    log,
    /,OP_LAUNCH,ATEN_START,torch\._ops\.swnest\.launch_fill\.default,.*\n.*,KERNEL_LAUNCH,KERNEL_LAUNCH,Fill,.*\n.*,OP_LAUNCH,ATEN_END,torch\._ops\.swnest\.launch_fill\.default,/,
  );
});

Deno.test("the hook records CPU storages where PyTorch allocates them: one row per storage an op keeps, none for in-place ops, views, scratch or a forked child's frees; a block watched by address outlives its free; memory of other allocators is recorded by the client", async () => {
  const r = await runPython("host_rows.py", [], {
    STOMPWATCH_TEST_TMP: tempDir(),
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^hook records True$/m);
  const [, y] = /^y (0x[0-9a-f]+)$/m.exec(r.stdout)!;
  const [, oldX, newX] = /^x (0x[0-9a-f]+) (0x[0-9a-f]+)$/m.exec(r.stdout)!;
  const [, child, kept] = /^child (\d+) (0x[0-9a-f]+)$/m.exec(r.stdout)!;
  const rows = Deno.readTextFileSync(eventLog(r.out)).trim().split("\n")
    .slice(1).map((l) => l.split(","));
  const between = (from: string, to: string) => {
    const at = (m: string) =>
      rows.findIndex((f) => f[1] === "MSTX" && f[3] === m);
    return rows.slice(at(from) + 1, at(to))
      .filter((f) => f[2] === "HOST")
      .map((f) => [f[1], f[3], Number(f[8])]);
  };
  const addr = (hex: string) => Number(BigInt(hex));
  assert.deepEqual(between("in-place and view", "temporary"), []);
  assert.deepEqual(between("temporary", "resize"), [
    ["MALLOC", "torch._ops.aten.add.Tensor", addr(y)],
    ["FREE", "N/A", addr(y)],
  ]);
  const resized = between("resize", "pinned");
  assert.deepEqual(resized.slice(0, 2), [
    ["MALLOC", "torch._ops.aten.resize_.default", addr(newX)],
    ["FREE", "N/A", addr(oldX)],
  ]);
  // The conv layer's weight and bias, its input, its output: nothing of
  // oneDNN's own.
  assert.deepEqual(resized.slice(2).map(([e, op]) => [e, op]), [
    ["MALLOC", "torch._ops.aten.empty.memory_format"],
    ["MALLOC", "torch._ops.aten.empty.memory_format"],
    ["MALLOC", "torch._ops.aten.randn.default"],
    ["MALLOC", "torch._ops.aten.convolution.default"],
  ]);
  const [, pinned] = /^pinned (0x[0-9a-f]+)$/m.exec(r.stdout)!;
  assert.deepEqual(
    between("pinned", "from file").filter(([, , a]) => a === addr(pinned)),
    [
      ["MALLOC", "torch._ops.aten.randn.default", addr(pinned)],
      ["FREE", "N/A", addr(pinned)],
    ],
  );
  const [, mapped] = /^mapped (0x[0-9a-f]+)$/m.exec(r.stdout)!;
  assert.deepEqual(between("from file", "fork"), [
    ["MALLOC", "torch._ops.aten.from_file.default", addr(mapped)],
  ]);
  const ofChild = rows.filter((f) => f[5] === child && f[2] === "HOST");
  assert.deepEqual(ofChild.map((f) => [f[1], f[3], Number(f[8])]), [
    ["MALLOC", "torch._ops.aten.ones.default", addr(kept)],
  ]);
});

Deno.test("CPU storage rows stay in order when other threads allocate and free while ops run, by the hook or by the client: every FREE follows its MALLOC and none is lost", async () => {
  const r = await runPython("threads_rows.py");
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^handed over 3000$/m);
  const rows = Deno.readTextFileSync(eventLog(r.out)).trim().split("\n")
    .slice(1).map((l) => l.split(","));
  const live = new Set<string>();
  let mallocs = 0, frees = 0;
  for (const f of rows) {
    if (f[2] !== "HOST") continue;
    const key = `${f[5]} ${f[8]}`;
    if (f[1] === "MALLOC") {
      assert.ok(!live.has(key), `MALLOC of a live block: ${f.join(",")}`);
      live.add(key);
      mallocs++;
    } else if (f[1] === "FREE") {
      assert.ok(live.delete(key), `FREE without its MALLOC: ${f.join(",")}`);
      frees++;
    }
  }
  assert.match(r.stdout, /^tagged 3000$/m);
  assert.ok(mallocs >= 6000 && frees >= 6000, `${mallocs} ${frees}`);
  assert.equal(live.size, 0, [...live].join(" "));
});

// On the copier's path the window's block is found among the start op's
// outputs, which no watch holds.
for (const [memory, env] of MEMORIES) {
  Deno.test(`run --watch on Aten ops opens a window on ${memory} in a script that never imports stompwatch, and names the op that stomped it`, async () => {
    const r = await runPython("cli_window.py", [
      "--watch=torch._ops.aten.add_.Tensor,torch._ops.aten.mul_.Tensor",
    ], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^a\[3\] = 198\.0$/m);
    const w = report(r.out).get("torch._ops.aten.add_.Tensor")!;
    assert.equal(w.stomp, true);
    assert.equal(w.first_change?.op, "torch._ops.cliwin.sneaky.default");
    assert.equal(w.first_change?.call_count, 1);
  });
}

Deno.test("a run --watch spec written with the full-width comma opens the same window on device memory as with a comma", async () => {
  const r = await runPython("cli_window.py", [
    "--watch=torch._ops.aten.add_.Tensor\uff0ctorch._ops.aten.mul_.Tensor",
  ], { STOMPWATCH_TEST_DEVICE_COPY: "1" });
  assert.equal(r.code, 0, r.stderr);
  const w = report(r.out).get("torch._ops.aten.add_.Tensor")!;
  assert.equal(w.stomp, true);
  assert.equal(w.first_change?.op, "torch._ops.cliwin.sneaky.default");
  assert.equal(w.unread_samples, undefined);
});

Deno.test("a run --watch window whose device block is freed before its end op says how many samples could not be read", async () => {
  const r = await runPython("cli_window_freed.py", [
    "--watch=torch._ops.aten.add_.Tensor,torch._ops.aten.mul_.Tensor",
  ], { STOMPWATCH_TEST_DEVICE_COPY: "1" });
  assert.equal(r.code, 0, r.stderr);
  const unread = report(r.out).get("torch._ops.aten.add_.Tensor")!
    .unread_samples!;
  assert.ok(unread >= 2, `${unread} unread`);
  assert.match(
    r.stderr,
    new RegExp(
      `watch torch\\._ops\\.aten\\.add_\\.Tensor .*: written by torch\\._ops\\.aten\\.add_\\.Tensor #1, one of its outputs .*; ${unread} of its samples could not be read`,
    ),
  );
});

Deno.test("BatchNorm's running statistics are its own to write in training; a tensor made from a Python list is recorded and can be watched by address", async () => {
  const r = await runPython("batchnorm_literal.py");
  assert.equal(r.code, 0, r.stderr);
  const w = report(r.out).get("running_mean")!;
  assert.equal(w.stomp, false);
  assert.ok(
    w.changes.length > 0 &&
      w.changes.every((c) =>
        c.op === "torch._ops.aten.native_batch_norm.default" && c.allowed
      ),
    JSON.stringify(w.changes),
  );
  const kept = BigInt(/^kept (0x[0-9a-f]+)$/m.exec(r.stdout)![1]);
  const rows = Deno.readTextFileSync(eventLog(r.out)).split("\n")
    .map((l) => l.split(","));
  assert.ok(
    rows.some((f) =>
      f[1] === "MALLOC" && f[3] === "torch._ops.aten.lift_fresh.default" &&
      BigInt(f[8]) === kept
    ),
  );
});
