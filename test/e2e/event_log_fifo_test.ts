/**
 * openEventLog with a FIFO put in the log's place between any check by
 * path and the open: it reads the log it checked, or refuses, and never
 * waits for a writer. The swap is made deterministic by running it inside
 * Deno.stat, the check by path the function could make.
 */
import assert from "node:assert/strict";
import { closeSync, constants, lstatSync, openSync } from "node:fs";
import {
  openEventLog,
  readMemscopeCsv,
} from "../../analysis/memscope_csv/mod.ts";
import { EVENT_LOG_HEADER } from "../../analysis/memscope_csv/mod.ts";
import { tempDir } from "./_harness.ts";

const LOG = `${EVENT_LOG_HEADER}\n1,MSTX,Mark,"step",5,1,1,0,N/A,\n`;

/** Opens `path` for writing once it is a FIFO with a reader, freeing a blocked open. */
async function unblockWhileFifo(path: string, done: () => boolean) {
  while (!done()) {
    try {
      if (lstatSync(path).isFIFO()) {
        closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
      }
    } catch { /* no reader yet (ENXIO), or mid-swap */ }
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("openEventLog reads the log it checked even when a FIFO takes its place right after a check by path", async () => {
  const path = `${tempDir()}/memscope_dump.csv`;
  Deno.writeTextFileSync(path, LOG);
  const stat = Deno.stat;
  Deno.stat = async (p) => {
    const info = await stat(p);
    Deno.removeSync(path);
    new Deno.Command("mkfifo", { args: [path] }).outputSync();
    return info;
  };
  let finished = false;
  const unblocker = unblockWhileFifo(path, () => finished);
  try {
    let marks = 0;
    try {
      using log = await openEventLog(path);
      await readMemscopeCsv(log, () => marks++);
    } catch (e) {
      assert.match((e as Error).message, /not a file/);
      return;
    }
    assert.equal(marks, 1, "it read the log, not the FIFO");
  } finally {
    Deno.stat = stat;
    finished = true;
    await unblocker;
  }
});
