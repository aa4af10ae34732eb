/**
 * Our WebAssembly row scanner (`analysis/memscope_csv/`) next to the two
 * best-kept npm CSV parsers, csv-parse and papaparse, on the same files in
 * the same run (issue 11, part 3): each streams the file from disk (warm
 * cache) and counts the MALLOC rows by their Event field, the least that
 * check-leaks does with a row. The npm parsers are imported as `npm:`
 * specifiers here only: nothing outside the bench loads them.
 * Part of `deno task bench`; alone: `deno run -A bench/csv_parsers.ts`.
 *
 * @module
 */
// deno-lint-ignore-file no-import-prefix
import { createReadStream } from "node:fs";
import { parse as csvParse } from "npm:csv-parse@7.0.3";
import Papa from "npm:papaparse@5.7.1";
import { readMemscopeCsv } from "../analysis/memscope_csv/mod.ts";
import type { Row } from "./_jobs.ts";
import { readAll } from "./analysis_matrix.ts";
import { repeatFixture, SHAPES, writeShapedLog } from "./_log_shapes.ts";
import { runAlone } from "./_report.ts";

const FIXTURES =
  new URL("../../shared/fixtures/msmemscope/", import.meta.url).pathname;

type Reader = (path: string) => Promise<number>;

/** Ours: the reader check-leaks and compare use. */
const ours: Reader = async (path) => {
  let n = 0;
  await readMemscopeCsv(path, (row) => {
    if (row.event === "MALLOC") n++;
  }, { columns: ["Event"] });
  return n;
};

/** csv-parse's streaming parser fed by a file stream, as its docs show. */
const csvParseReader: Reader = async (path) => {
  let n = 0;
  const parser = createReadStream(path, { highWaterMark: 2 << 20 }).pipe(
    csvParse({ from_line: 2, relax_column_count: true }),
  );
  for await (const record of parser) if (record[1] === "MALLOC") n++;
  return n;
};

/** papaparse's streaming mode (one row per step) on a file stream. */
const papaReader: Reader = (path) =>
  new Promise((resolve, reject) => {
    let n = 0, header = true;
    Papa.parse(createReadStream(path, { highWaterMark: 2 << 20 }), {
      step: (r: { data: string[] }) => {
        if (header) header = false;
        else if (r.data[1] === "MALLOC") n++;
      },
      complete: () => resolve(n),
      error: reject,
    });
  });

async function bestMs(read: Reader, path: string, n: number) {
  let ms = Infinity, count = 0;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    count = await read(path);
    ms = Math.min(ms, performance.now() - t0);
  }
  return { ms, count };
}

/**
 * Runs the three readers on a generated log and a repeated fixture.
 *
 * @example
 * ```ts
 * import { benchCsvParsers } from "./csv_parsers.ts";
 * await benchCsvParsers((what, ours, base, target, ok) =>
 *   console.log(what, ours, base, target, ok)
 * );
 * ```
 */
export async function benchCsvParsers(row: Row): Promise<void> {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_bench_csv_" });
  try {
    const logs = [
      {
        label: SHAPES[0].name,
        log: writeShapedLog(`${dir}/memory.csv`, 1_000_000, SHAPES[0]),
      },
      {
        label: "real fixture compare_baseline repeated",
        log: repeatFixture(
          `${FIXTURES}compare_baseline.csv`,
          `${dir}/fixture.csv`,
          1_000_000,
        ),
      },
    ];
    for (const { label, log } of logs) {
      const mb = log.bytes / 1e6;
      let readMs = Infinity;
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        await readAll(log.path);
        readMs = Math.min(readMs, performance.now() - t0);
      }
      const us = await bestMs(ours, log.path, 3);
      const others = [
        ["csv-parse 7.0.3", await bestMs(csvParseReader, log.path, 2)],
        ["papaparse 5.7.1", await bestMs(papaReader, log.path, 2)],
      ] as const;
      for (const [name, r] of others) {
        if (r.count !== us.count) {
          throw new Error(
            `${name} counted ${r.count} MALLOC rows in ${log.path}, ours ${us.count}`,
          );
        }
      }
      const rate = (ms: number) => (mb / (ms / 1000)).toFixed(0);
      const fastest = Math.min(...others.map(([, r]) => r.ms));
      row(
        `CSV rows, ${label} (${mb.toFixed(0)} MB): ours (WebAssembly)`,
        `${rate(us.ms)} MB/s (${us.ms.toFixed(0)} ms)`,
        `${
          others.map(([name, r]) => `${name} ${rate(r.ms)} MB/s`).join(", ")
        }; read only ${rate(readMs)} MB/s`,
        ">= 2x the fastest npm parser",
        fastest / us.ms >= 2,
      );
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

if (import.meta.main) await runAlone(benchCsvParsers);
