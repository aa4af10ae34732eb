/**
 * Two bench runs side by side, from the JSON each wrote:
 * `deno run --allow-read bench/side_by_side.ts A.json B.json`. Prints both
 * machines, then each row's figure and baseline in A and B, and how the
 * ratio of figure to baseline moved (the one number that travels between
 * machines). Rows are matched by their `what`.
 *
 * @module
 */
import type { BenchReport } from "./_report.ts";

function load(path: string): BenchReport {
  try {
    const report = JSON.parse(Deno.readTextFileSync(path));
    if (!report?.machine || !Array.isArray(report.rows)) {
      throw new SyntaxError("not a bench report");
    }
    return report as BenchReport;
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound
      ? "no such file"
      : e instanceof SyntaxError
      ? "not the JSON of a bench run"
      : (e as Error).message.split(" (os error")[0];
    console.error(
      `Cannot read ${path}: ${why}; pass two JSON files written by ./stompwatch bench`,
    );
    Deno.exit(2);
  }
}

function ratio(ours: number | null, base: number | null): string {
  return ours !== null && base ? `${(ours / base).toFixed(2)}x` : "-";
}

/**
 * The side-by-side lines of two reports.
 *
 * @example
 * ```ts
 * import { sideBySide } from "./side_by_side.ts";
 * const m = {
 *   cpu: "x", cores: 2, kernel: "6", mitigations: {}, memcpyGiBs: 10,
 *   memcpyBy: "bench_dump memcpy", ddGiBs: 2, deno: "2",
 * };
 * const row = {
 *   what: "r", ours: "2 MB/s", baseline: "1 MB/s", target: "", met: true,
 *   oursValue: 2, baselineValue: 1,
 * };
 * const a = { started: "", machine: m, rows: [row] };
 * console.log(sideBySide(a, a).join("\n"));
 * ```
 */
export function sideBySide(a: BenchReport, b: BenchReport): string[] {
  const lines: string[] = [];
  for (const [tag, r] of [["A", a], ["B", b]] as const) {
    const m = r.machine;
    // Reports from before 2026-11-28 have no second-thread figures, and
    // those of the morning of 2026-11-28 no round trip among them.
    const two = [m.parallel, m.parallelAtEnd].map((p) =>
      p ? `${p.ratio.toFixed(2)}x` : "?"
    );
    const trips = [m.parallel, m.parallelAtEnd].map((p) =>
      p?.roundTrip ? `${p.roundTrip.median} ns` : "?"
    );
    lines.push(
      `${tag}: ${r.started} ${m.cpu}, ${m.cores} cores, Linux ${m.kernel}, memcpy ${
        m.memcpyGiBs.toFixed(2)
      } GiB/s, dd ${m.ddGiBs.toFixed(2)} GiB/s, two threads ${
        two[0]
      } one's work before, ${two[1]} after, core-to-core round trip ${
        trips[0]
      } before, ${trips[1]} after`,
    );
  }
  const names = new Set([
    ...Object.keys(a.machine.mitigations),
    ...Object.keys(b.machine.mitigations),
  ]);
  for (const name of [...names].sort()) {
    const x = a.machine.mitigations[name], y = b.machine.mitigations[name];
    if (x !== y) lines.push(`  ${name}: A ${x ?? "-"} | B ${y ?? "-"}`);
  }
  const head = ["what", "A ours", "A baseline", "A ratio", "B ours"];
  const cells = [[...head, "B baseline", "B ratio"]];
  const byWhat = new Map(b.rows.map((r) => [r.what, r]));
  for (const ra of a.rows) {
    const rb = byWhat.get(ra.what);
    byWhat.delete(ra.what);
    cells.push([
      ra.what,
      ra.ours,
      ra.baseline,
      ratio(ra.oursValue, ra.baselineValue),
      rb?.ours ?? "-",
      rb?.baseline ?? "-",
      rb ? ratio(rb.oursValue, rb.baselineValue) : "-",
    ]);
  }
  for (const rb of byWhat.values()) {
    cells.push([
      rb.what,
      "-",
      "-",
      "-",
      rb.ours,
      rb.baseline,
      ratio(rb.oursValue, rb.baselineValue),
    ]);
  }
  const widths = cells[0].map((_, i) =>
    Math.max(...cells.map((c) => c[i].length))
  );
  lines.push("");
  for (const c of cells) {
    lines.push(c.map((x, i) => x.padEnd(widths[i])).join("  ").trimEnd());
  }
  return lines;
}

if (import.meta.main) {
  if (Deno.args.length !== 2) {
    console.error(
      "Usage: deno run --allow-read bench/side_by_side.ts A.json B.json (files written by ./stompwatch bench)",
    );
    Deno.exit(2);
  }
  const [a, b] = Deno.args.map(load);
  for (const line of sideBySide(a, b)) console.log(line);
}
