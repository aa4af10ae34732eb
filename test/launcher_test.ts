import assert from "node:assert/strict";

const LAUNCHER = new URL("../stompwatch", import.meta.url).pathname;

async function launch(...args: string[]) {
  const out = await new Deno.Command(LAUNCHER, {
    args,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

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
    const r = await launch(...args);
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

Deno.test("the launcher rebuilds the native code when a source changed since its last check, and runs no make when none did", () => {
  const root = new URL("..", import.meta.url).pathname;
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_launcher_" });
  try {
    // A checkout of its own (the tracked files, times kept), the built
    // libraries and the installed Deno, with a make on PATH that notes each
    // call.
    Deno.mkdirSync(`${dir}/co`);
    const copy = new Deno.Command("bash", {
      args: [
        "-c",
        'git ls-files -z ffi main.ts stompwatch cli daemon routes watch analysis deno.json deno.lock | xargs -0 cp --parents -a -t "$1"',
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
