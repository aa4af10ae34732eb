import assert from "node:assert/strict";
import { MEMSCOPE_HEADER } from "../../analysis/memscope_csv/mod.ts";
import { DAEMON_LIBRARY } from "../../ffi/bindings.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const HEADER = MEMSCOPE_HEADER.join(",");

const mark = (id: number) => `${id},MSTX,Mark,"step",${id},1,1,0,N/A,,,`;
const hal = (event: string, id: number, ptr: string) =>
  `${id},${event},HAL,N/A,${id},1,1,0,${ptr},"{allocation_id:${id},addr:${ptr},size:2097152}",,`;

function tempFile(name: string, text: string | Uint8Array): string {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_cli_" });
  const path = `${dir}/${name}`;
  if (typeof text === "string") Deno.writeTextFileSync(path, text);
  else Deno.writeFileSync(path, text);
  return path;
}

const log = (rows: string[]) =>
  tempFile("memscope_dump.csv", [HEADER, ...rows].join("\n") + "\n");
const LEAKY = log([
  mark(10),
  hal("MALLOC", 11, "0x0000000000a00000"),
  mark(20),
  mark(30),
]);
const CLEAN = log([
  mark(10),
  hal("MALLOC", 11, "0x0000000000a00000"),
  hal("FREE", 12, "0x0000000000a00000"),
  mark(20),
  mark(30),
]);

/**
 * Runs `main.ts check-leaks` with read access and the daemon library, as the
 * launcher does.
 */
async function checkLeaks(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      "--allow-read",
      `--allow-ffi=${DAEMON_LIBRARY}`,
      MAIN,
      "check-leaks",
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

/** Exit code 2 and one line on stderr matching `message`, nothing else. */
async function refuses(args: string[], message: RegExp) {
  const r = await checkLeaks(...args);
  assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
  assert.equal(r.stdout, "");
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], /^stompwatch: /);
  assert.match(lines[0], message);
}

Deno.test("check-leaks prints the real tool's lines and exits 1 when it finds a leak", async () => {
  const r = await checkLeaks("--input", LEAKY, "--mstx-info", "step");
  assert.equal(r.code, 1);
  assert.equal(
    r.stdout,
    "INFO: Starting to analyze data for device 0...\n\n" +
      "Leak Analysis Results for the Custom Range:\n" +
      "====== ERROR: Detected memory leaks on device 0 ======\n" +
      "Direct Hal memory leak of 2.0 Mb(s) at 0x0000000000a00000 in Index 11.\n",
  );
  assert.equal(r.stderr, "");
});

Deno.test("check-leaks exits 0 when nothing leaked", async () => {
  const r = await checkLeaks(`--input=${CLEAN}`, "--mstx-info=step");
  assert.equal(r.code, 0);
  assert.equal(
    r.stdout,
    "INFO: Starting to analyze data for device 0...\n\n" +
      "Leak Analysis Results for the Custom Range:\n" +
      "No hal memory leaks detected on device 0.\n",
  );
});

Deno.test("check-leaks exits 2 when no device has three marks from the start index", async () => {
  const r = await checkLeaks(
    "--input",
    LEAKY,
    "--mstx-info",
    "step",
    "--start-index",
    "1",
  );
  assert.equal(r.code, 2);
  assert.equal(
    r.stdout,
    "INFO: Starting to analyze data for device 0...\n" +
      "INFO: Start index 1 is out of bounds. Device 0 has a total of 3 MSTX events.\n",
  );
});

Deno.test("check-leaks --json gives the structured result", async () => {
  const r = await checkLeaks(
    "--input",
    LEAKY,
    "--mstx-info",
    "step",
    "--json",
  );
  assert.equal(r.code, 1);
  const result = JSON.parse(r.stdout);
  assert.equal(result.leakCount, 1);
  assert.equal(result.devices[0].leaks[0].ptr, "0x0000000000a00000");
  assert.equal(result.devices[0].leaks[0].bytes, 2097152);
});

Deno.test("check-leaks refuses each bad input with one line that says what to do", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_cli_" });
  const binary = tempFile(
    "core.csv",
    new Uint8Array([0x7f, 0x45, 0x4c, 0, 10]),
  );
  const other = tempFile("people.csv", "name,age\nbob,3\n");
  const header = tempFile(
    "old.csv",
    "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Ptr,Attr\n",
  );
  const step = ["--mstx-info", "step"];
  const cases: Array<[string[], RegExp]> = [
    [step, /Missing --input: give the msMemScope event log/],
    [
      ["--input", `${dir}/nope.csv`, ...step],
      /Cannot read .*nope\.csv: no such file; pass the path/,
    ],
    [["--input", dir, ...step], /Cannot read .*: not a file; /],
    [
      ["--input", binary, ...step],
      /Not a CSV file: .*core\.csv holds binary data/,
    ],
    [
      ["--input", other, ...step],
      /Not an msMemScope event log: .*people\.csv has no ID and Event columns in its first line/,
    ],
    [
      ["--input", header, ...step],
      /Wrong header in .*old\.csv: missing column "Device Id"/,
    ],
    [
      ["--input", LEAKY],
      /Missing --mstx-info: give the message of the mstx marks/,
    ],
    [["--input", LEAKY, "--mstx-info", ""], /Empty --mstx-info: /],
    [
      ["--input", LEAKY, ...step, "--start-index", "-1"],
      /Invalid --start-index value: -1; use a whole number from 0/,
    ],
    [
      ["--input", LEAKY, ...step, "--start-index", "two"],
      /Invalid --start-index value: two; /,
    ],
    [
      ["--input", LEAKY, ...step, "--start-index", "1.5"],
      /Invalid --start-index value: 1\.5; /,
    ],
    [
      ["--input", LEAKY, ...step, "--event-type", "GPU"],
      /Invalid --event-type value: GPU; use one of HAL, PTA, ATB, MINDSPORE, HOST, HOST_PINNED/,
    ],
    [
      ["--input", LEAKY, ...step, "--event-type", "\x1b[2J"],
      /Invalid --event-type value: \\x1b\[2J; use one of /,
    ],
    [
      ["--input", LEAKY, ...step, "--verbose"],
      /Unknown option: --verbose; check-leaks takes --input, /,
    ],
    [["--input", LEAKY, ...step, "extra"], /Unexpected argument: extra; /],
  ];
  for (const [args, message] of cases) await refuses(args, message);
});

const LAUNCHER = new URL("../../stompwatch", import.meta.url).pathname;

Deno.test("check-leaks through the launcher reads a log named by a symbolic link and reports its leaks", async () => {
  // The launcher grants read access to the path given, not to the link's
  // target: every pass must read through the one file opened.
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_cli_" });
  const link = `${dir}/linked.csv`;
  Deno.symlinkSync(LEAKY, link);
  const out = await new Deno.Command(LAUNCHER, {
    args: ["check-leaks", "--input", link, "--mstx-info", "step"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  assert.equal(dec.decode(out.stderr), "");
  assert.equal(out.code, 1);
  assert.equal(
    dec.decode(out.stdout),
    "INFO: Starting to analyze data for device 0...\n\n" +
      "Leak Analysis Results for the Custom Range:\n" +
      "====== ERROR: Detected memory leaks on device 0 ======\n" +
      "Direct Hal memory leak of 2.0 Mb(s) at 0x0000000000a00000 in Index 11.\n",
  );
});

Deno.test("check-leaks never quotes a line of a file that is not an event log", async () => {
  const secret = "token-7f3a9c1e5b";
  for (
    const text of [
      `${secret}\n`,
      `${secret},ID\nx\n`,
      `ID,${secret}\n1\n`,
      `ID,Event,${secret}\n1,2,3\n`,
    ]
  ) {
    const path = tempFile("token", text);
    const r = await checkLeaks("--input", path, "--mstx-info", "step");
    assert.equal(r.code, 2);
    assert.ok(!r.stderr.includes(secret), r.stderr);
    assert.ok(!r.stdout.includes(secret), r.stdout);
    assert.match(r.stderr, /^stompwatch: (Not an msMemScope|Wrong header)/);
  }
});

Deno.test("check-leaks on a special file Deno guards beyond any read grant says so without Deno's advice", async () => {
  const out = await new Deno.Command(LAUNCHER, {
    args: ["check-leaks", "--input", "/proc/self/mem", "--mstx-info", "step"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 2);
  assert.match(
    stderr,
    /^stompwatch: Cannot read \/proc\/self\/mem: not a file stompwatch reads/,
  );
  assert.doesNotMatch(stderr, /--allow|Requires/);
});

Deno.test("check-leaks --start-index with more digits than a number holds is out of bounds, printed as given", async () => {
  const r = await checkLeaks(
    "--input",
    LEAKY,
    "--mstx-info",
    "step",
    "--start-index",
    "099999999999999999999",
  );
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stdout,
    /^INFO: Start index 99999999999999999999 is out of bounds\. Device 0 has a total of \d+ MSTX events\.$/m,
  );
});
