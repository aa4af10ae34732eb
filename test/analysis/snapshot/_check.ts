/**
 * Runs check_snapshot.py (Python's pickle, pickletools, the viewer's rules
 * and the installed torch/cuda/_memory_viz.py) on snapshot files.
 *
 * @module
 */
const script = new URL("./check_snapshot.py", import.meta.url).pathname;

/** One file's result, as check_snapshot.py prints it. */
/** Where the msMemScope fixtures lie: shared/ beside the checkout. */
export const FIXTURES =
  new URL("../../../../shared/fixtures/msmemscope/", import.meta.url).pathname;

/** The msMemScope fixtures' logs (none where shared/ is not beside us). */
export const fixtures: string[] = (() => {
  try {
    return [...Deno.readDirSync(FIXTURES)]
      .filter((e) => e.name.endsWith(".csv"))
      .map((e) => `${FIXTURES}${e.name}`)
      .sort();
  } catch {
    return [];
  }
})();

export interface Checked {
  file: string;
  ok: boolean;
  error?: string;
  devices: number;
  viewer_events: number[];
  total_reserved: number;
  segsum_segments: number;
  trace_entries: number[];
  allocated: number;
  allocated_by_device: Record<string, number>;
}

/**
 * Checks `files`; an entry `FILE=LOG.csv[@PID]` also compares the bytes in
 * use at the end with what the log says on its own.
 */
export async function checkSnapshots(files: string[]): Promise<Checked[]> {
  const out = await new Deno.Command("python3", {
    args: ["-W", "ignore", script, ...files],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const lines = text.trim().split("\n").filter((l) => l.startsWith("{"));
  if (lines.length !== files.length) {
    throw new Error(
      `check_snapshot.py gave ${lines.length} results for ${files.length} files: ${
        new TextDecoder().decode(out.stderr)
      }`,
    );
  }
  return lines.map((l) => JSON.parse(l));
}
