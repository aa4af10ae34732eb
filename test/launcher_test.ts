import assert from "node:assert/strict";
import { STOMPWATCH, stompwatch } from "./e2e/_harness.ts";

Deno.test("the launcher refuses a path holding a comma in one line of its own, before Deno would", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_launcher_" });
  const cases: Array<[string[], string]> = [
    [["daemon", "--output", `${dir}/a,b`], "--output"],
    [["run", "--output", `${dir}/c,d`, "--", "/bin/true"], "--output"],
    [[
      "run",
      "--daemon",
      `${dir}/e,f/stompwatch.sock`,
      "--",
      "/bin/true",
    ], "the socket"],
    [
      ["check-leaks", "--input", `${dir}/g,h.csv`, "--mstx-info", "step"],
      "--input",
    ],
  ];
  for (const [args, what] of cases) {
    const r = await stompwatch(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(
      r.stderr,
      new RegExp(`^stompwatch: Cannot use ${what} .*holds a comma.*\\n$`),
    );
    assert.doesNotMatch(r.stderr, /invalid host|Caused by|--allow/);
  }
  assert.deepEqual([...Deno.readDirSync(dir)], [], "nothing was made");
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("COMMAND --help prints that command's usage and runs nothing; an unknown command's is refused", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_launcher_" });
  try {
    // Options beside --help, even wrong ones, are not read; bench and test
    // would each have run for minutes.
    const cases: Array<[string[], string]> = [
      [
        ["check-leaks", "--input", `${dir}/none.csv`, "--help"],
        "check-leaks --input F.csv",
      ],
      [
        ["compare", "-h", "--no-such-option"],
        "compare --input BASE.csv,COMPARE.csv",
      ],
      [
        ["snapshot", "--help", "-o", `${dir}/x.pickle`],
        "snapshot --input F.csv -o FILE",
      ],
      [["daemon", "--output", `${dir}/out`, "--help"], "daemon [--output DIR]"],
      [["run", "--help", "--", "/bin/false"], "run [--watch="],
      [["env", "-h"], "env [--output DIR]"],
      [["bench", "--help"], "bench "],
      [["test", "--help"], "test "],
      [["help", "snapshot"], "snapshot --input F.csv -o FILE"],
    ];
    for (const [args, line] of cases) {
      const r = await stompwatch(args);
      assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
      assert.equal(r.stderr, "", args.join(" "));
      const lines = r.stdout.trimEnd().split("\n");
      assert.equal(lines[0], "usage:", args.join(" "));
      assert.ok(lines[1].startsWith(`  stompwatch ${line}`), r.stdout);
      // That command's lines alone.
      assert.equal(
        lines.slice(1).filter((l) => l.startsWith("  stompwatch ")).length,
        1,
        r.stdout,
      );
    }
    assert.deepEqual([...Deno.readDirSync(dir)], [], "nothing was made");
    const unknown = await stompwatch(["nope", "--help"]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^stompwatch: Unknown command: nope\nusage:/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

/**
 * A checkout of its own in `dir`/co: the tracked files (times kept), the
 * built libraries (no bundle of an analysis) and the installed Deno.
 */
function checkoutIn(dir: string): void {
  const root = new URL("..", import.meta.url).pathname;
  Deno.mkdirSync(`${dir}/co`);
  const copy = new Deno.Command("bash", {
    args: [
      "-c",
      'git ls-files -z --cached --others --exclude-standard ffi main.ts stompwatch cli daemon routes watch analysis deno.json deno.lock | xargs -0 cp --parents -a -t "$1"',
      "_",
      `${dir}/co`,
    ],
    cwd: root,
  }).outputSync();
  assert.equal(copy.code, 0, new TextDecoder().decode(copy.stderr));
  Deno.chmodSync(`${dir}/co/stompwatch`, 0o755);
  Deno.symlinkSync(`${root}.deno`, `${dir}/co/.deno`);
  new Deno.Command("cp", {
    args: ["-a", `${root}ffi/build`, `${dir}/co/ffi/build`],
  }).outputSync();
  for (const entry of Deno.readDirSync(`${dir}/co/ffi/build`)) {
    if (/\.js$|\.unbundled$/.test(entry.name)) {
      Deno.removeSync(`${dir}/co/ffi/build/${entry.name}`);
    }
  }
}

Deno.test("the launcher rebuilds the native code when a source changed since its last check, and runs no make when none did", () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_launcher_" });
  try {
    // With a make on PATH that notes each call.
    checkoutIn(dir);
    Deno.mkdirSync(`${dir}/bin`);
    Deno.writeTextFileSync(
      `${dir}/bin/make`,
      `#!/bin/sh\necho "$@" >> ${dir}/make.log\nexec /usr/bin/make "$@"\n`,
    );
    Deno.chmodSync(`${dir}/bin/make`, 0o755);
    const help = () =>
      new Deno.Command(`${dir}/co/stompwatch`, {
        args: ["help"],
        env: { PATH: `${dir}/bin:${Deno.env.get("PATH")}` },
        stdout: "null",
        stderr: "piped",
      }).outputSync();
    const makeCalls = () => {
      try {
        return Deno.readTextFileSync(`${dir}/make.log`).trim().split("\n")
          .length;
      } catch {
        return 0;
      }
    };
    const lib = `${dir}/co/ffi/build/libstompwatch_analysis.so`;

    assert.equal(help().code, 0);
    const first = makeCalls(); // no stamp yet: make decides once
    assert.equal(help().code, 0);
    assert.equal(makeCalls(), first, "nothing changed: no make");

    // The library and the last check an hour ago, a source edited since.
    const source = `${dir}/co/ffi/analysis/convert.c`;
    const hourAgo = new Date(Date.now() - 3600_000);
    const halfHourAgo = new Date(Date.now() - 1800_000);
    Deno.utimeSync(lib, hourAgo, hourAgo);
    Deno.utimeSync(`${dir}/co/ffi/build/.up_to_date`, hourAgo, hourAgo);
    Deno.utimeSync(source, halfHourAgo, halfHourAgo);
    const r = help();
    assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
    assert.ok(makeCalls() > first, "a newer source: make ran");
    assert.ok(
      Deno.statSync(lib).mtime! >= Deno.statSync(source).mtime!,
      "the library was rebuilt",
    );
    const after = makeCalls();
    assert.equal(help().code, 0);
    assert.equal(makeCalls(), after, "rebuilt: no make again");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("the launcher runs each analysis from a bundle it makes once and makes again when a TypeScript source changed, and from its sources where it cannot bundle", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_launcher_" });
  const fixture = `${dir}/memscope_dump.csv`;
  try {
    checkoutIn(dir);
    // A block allocated between the first two marks and never freed.
    const header = "ID,Event,Event Type,Name,Timestamp(ns),Process Id," +
      "Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)";
    const mark = (id: number) => `${id},MSTX,Mark,"step",${id},1,1,0,N/A,,,`;
    Deno.writeTextFileSync(
      fixture,
      [
        header,
        mark(1),
        '2,MALLOC,HAL,N/A,2,1,1,0,0x0000124100000000,"{size:4096}",,',
        mark(3),
        mark(4),
      ].join("\n") + "\n",
    );
    const bundle = `${dir}/co/ffi/build/check-leaks.js`;
    const checkLeaks = (args: string[], env: Record<string, string> = {}) =>
      stompwatch(["check-leaks", ...args], env, `${dir}/co/stompwatch`);
    const check = ["--input", fixture, "--mstx-info", "step"];

    const first = await checkLeaks(check);
    assert.equal(first.stderr, "");
    assert.match(first.stdout, /memory leak/);
    const made = Deno.statSync(bundle).mtime!;
    // Dated from when its making began, well before it was renamed into
    // place: a source saved while it was made is newer than it.
    const renamed = Deno.statSync(`${dir}/co/ffi/build`).mtime!;
    assert.ok(
      renamed.getTime() - made.getTime() >= 20,
      `bundle ${made.toISOString()}, renamed ${renamed.toISOString()}`,
    );
    assert.deepEqual(
      await checkLeaks(check),
      first,
      "the same from the bundle",
    );
    assert.deepEqual(Deno.statSync(bundle).mtime, made, "not made again");

    // A source edited since the bundle was made: the next command runs the
    // edit.
    const source = `${dir}/co/cli/check_leaks.ts`;
    const hourAgo = new Date(Date.now() - 3600_000);
    Deno.utimeSync(bundle, hourAgo, hourAgo);
    Deno.writeTextFileSync(
      source,
      Deno.readTextFileSync(source).replace(
        "Missing --input:",
        "Missing --input (edited):",
      ),
    );
    const edited = await checkLeaks([]);
    assert.equal(edited.code, 2);
    assert.match(edited.stderr, /^stompwatch: Missing --input \(edited\):/);
    assert.ok(Deno.statSync(bundle).mtime! > hourAgo, "made again");

    // No bundle and none to be had (Deno cannot fetch esbuild): said once,
    // and the check runs from its sources all the same.
    Deno.removeSync(bundle);
    const offline = {
      DENO_DIR: `${dir}/empty_deno_dir`,
      NPM_CONFIG_REGISTRY: "http://127.0.0.1:9/",
    };
    const unbundled = await checkLeaks(check, offline);
    assert.match(
      unbundled.stderr,
      /^stompwatch: could not bundle check-leaks \(.+\); running it from its sources instead/,
    );
    assert.equal(unbundled.stdout, first.stdout);
    assert.equal(unbundled.code, first.code);
    assert.deepEqual(await checkLeaks(check, offline), first, "said once");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("every module an analysis loads is among the sources whose change makes the launcher bundle it again", async () => {
  const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
  // The launcher's own list, expanded as it expands it.
  const line = Deno.readTextFileSync(STOMPWATCH).split("\n")
    .find((l) => l.startsWith("analysis_sources="));
  assert.ok(line, "the launcher names its analysis sources");
  const listed = await new Deno.Command("bash", {
    args: [
      "-c",
      `here="$1"; ${line}; printf '%s\\n' "\${analysis_sources[@]}"`,
      "_",
      root,
    ],
    stdout: "piped",
  }).output();
  const sources = new Set(
    new TextDecoder().decode(listed.stdout).trim().split("\n"),
  );
  for (const entry of ["check_leaks", "compare", "snapshot"]) {
    const info = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--no-config", "--json", `${root}/cli/${entry}_main.ts`],
      stdout: "piped",
    }).output();
    const graph = JSON.parse(new TextDecoder().decode(info.stdout)) as {
      modules: { specifier: string }[];
    };
    assert.ok(graph.modules.length > 10, entry);
    for (const { specifier } of graph.modules) {
      assert.ok(specifier.startsWith("file://"), `${entry}: ${specifier}`);
      const path = decodeURIComponent(new URL(specifier).pathname);
      assert.ok(
        sources.has(path),
        `${entry} loads ${path}, which the launcher does not watch`,
      );
    }
  }
});
