import assert from "node:assert/strict";
import { IoProblems } from "../../watch/io_problems.ts";
import { RETRY_EVERY_MS, RowFile } from "../../watch/row_file.ts";

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
  const problems = new IoProblems((l) => said.push(l), { backlogBytes: 8 });
  const { dir, heal } = brokenDir();
  let now = 0;
  const f = new RowFile({
    dir,
    name: () => "log.csv",
    header: rows("h\n"),
    problems,
    now: () => now,
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
  now += RETRY_EVERY_MS;
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

Deno.test("RowFile tries a failing file again only once its retry interval has passed", () => {
  const { dir, heal } = brokenDir();
  let now = 1000;
  const f = new RowFile({
    dir,
    name: () => "log.csv",
    problems: new IoProblems(() => {}),
    now: () => now,
  });
  f.write(rows("1,a\n"));
  heal();
  now += RETRY_EVERY_MS - 1;
  f.retry();
  f.write(rows("2,b\n"));
  assert.throws(() => Deno.statSync(`${dir}/log.csv`), Deno.errors.NotFound);
  now += 1;
  f.retry();
  f.close();
  assert.equal(Deno.readTextFileSync(`${dir}/log.csv`), "1,a\n2,b\n");
});

Deno.test("RowFile files share one backlog budget: what does not fit is dropped and counted for its own file", () => {
  const problems = new IoProblems(() => {}, { backlogBytes: 8 });
  const { dir } = brokenDir();
  const files = ["a.csv", "b.csv"].map((name) =>
    new RowFile({ dir, name: () => name, problems })
  );
  files[0].write(rows("1,a\n2,b\n")); // the whole budget
  files[1].write(rows("3,c\n"));
  assert.equal(problems.backlogHeld, 8);
  assert.deepEqual(
    problems.list().map((p) => [p.file, p.keptBytes, p.dropped]),
    [[`${dir}/a.csv`, 8, 0], [`${dir}/b.csv`, 0, 1]],
  );
  files[0].close();
  assert.equal(problems.backlogHeld, 0, "a closed file gives its part back");
  files[1].write(rows("4,d\n"));
  assert.equal(problems.backlogHeld, 4);
});

Deno.test("RowFile reopening its file cuts part of a row a failed write left before appending", () => {
  const dir = Deno.makeTempDirSync();
  const path = `${dir}/log.csv`;
  let now = 0;
  const f = new RowFile({
    dir,
    name: () => "log.csv",
    header: rows("h\n"),
    problems: new IoProblems(() => {}),
    now: () => now,
  });
  f.write(rows("1,a\n"));
  Deno.removeSync(path);
  f.write(rows("2,b\n")); // fails: its file is gone, the row is kept
  // The file again, ending in half a row a cut-short write could not take back.
  Deno.writeTextFileSync(path, "h\n1,a\n2,");
  now += RETRY_EVERY_MS;
  f.retry();
  f.close();
  assert.equal(Deno.readTextFileSync(path), "h\n1,a\n2,b\n");
});
