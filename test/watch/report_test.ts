import assert from "node:assert/strict";
import { IoProblems } from "../../watch/io_problems.ts";
import { type WatchReport, WatchReportFile } from "../../watch/report.ts";

const read = (path: string): WatchReport =>
  JSON.parse(Deno.readTextFileSync(path));

Deno.test("WatchReportFile keeps the watches of the report already there", () => {
  const dir = Deno.makeTempDirSync();
  const earlier = { watches: [{ name: "w", pid: 1, stomp: true }] };
  Deno.writeTextFileSync(`${dir}/watch_report.json`, JSON.stringify(earlier));
  const report = new WatchReportFile(dir, new IoProblems(() => {}));
  report.write([]);
  assert.deepEqual(read(report.path), earlier);
});

Deno.test("WatchReportFile moves a file that is not a report aside instead of writing over it", () => {
  const dir = Deno.makeTempDirSync();
  Deno.writeTextFileSync(`${dir}/watch_report.json`, "notes, not JSON");
  const report = new WatchReportFile(dir, new IoProblems(() => {}));
  report.write([]);
  assert.deepEqual(read(report.path), { watches: [] });
  assert.equal(
    Deno.readTextFileSync(`${dir}/watch_report.json.unreadable`),
    "notes, not JSON",
  );
});
