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
