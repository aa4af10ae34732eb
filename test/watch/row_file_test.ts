import assert from "node:assert/strict";
import { IoProblems } from "../../watch/io_problems.ts";
import { RowFile } from "../../watch/row_file.ts";

const rows = (text: string) => new TextEncoder().encode(text);

/** A directory that cannot be made until `heal` runs: its parent is a file. */
function brokenDir(): { dir: string; heal: () => void } {
  const base = Deno.makeTempDirSync();
  Deno.writeTextFileSync(`${base}/parent`, "");
  return {
    dir: `${base}/parent/logs`,
    heal: () => Deno.removeSync(`${base}/parent`),
  };
}

Deno.test("RowFile keeps rows it cannot write, drops what exceeds its backlog, and writes the rest once it can", () => {
  const said: string[] = [];
  const problems = new IoProblems((l) => said.push(l));
  const { dir, heal } = brokenDir();
  const f = new RowFile({
    dir,
    name: () => "log.csv",
    header: rows("h\n"),
    problems,
    backlogBytes: 8,
  });
  f.write(rows("1,a\n"));
  f.write(rows("2,b\n"));
  f.write(rows("3,c\n4,d\n")); // over the 8 bytes kept: dropped, counted
  const [p] = problems.list();
  assert.equal(p.file, `${dir}/log.csv`);
  assert.match(p.error, /Not a directory/);
  assert.equal(p.keptBytes, 8);
  assert.equal(p.dropped, 2);
  heal();
  f.retry();
  f.close();
  assert.equal(Deno.readTextFileSync(`${dir}/log.csv`), "h\n1,a\n2,b\n");
  assert.equal(said.filter((l) => l.includes("cannot write")).length, 1);
  assert.ok(said.some((l) => l.includes("again") && l.includes("2 dropped")));
  // What was lost stays listed once the file is written again.
  assert.deepEqual(
    problems.list().map((q) => [q.recovered, q.dropped]),
    [[true, 2]],
  );
});

Deno.test("RowFile never opens over a file that exists: it takes the next name", () => {
  const dir = Deno.makeTempDirSync();
  Deno.writeTextFileSync(`${dir}/log_0.csv`, "someone's rows\n");
  const f = new RowFile({
    dir,
    name: (i) => `log_${i}.csv`,
    problems: new IoProblems(() => {}),
  });
  f.write(rows("1,a\n"));
  f.close();
  assert.equal(f.path, `${dir}/log_1.csv`);
  assert.equal(Deno.readTextFileSync(`${dir}/log_0.csv`), "someone's rows\n");
  assert.equal(Deno.readTextFileSync(`${dir}/log_1.csv`), "1,a\n");
});
