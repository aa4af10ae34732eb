/**
 * Runs the test jobs of test/python/ under the real `./stompwatch run`.
 *
 * @module
 */
import { stompwatch, tempDir } from "./_harness.ts";

/** The repository's root directory. */
export const root = new URL("../../", import.meta.url).pathname;
/** The path of test/python/`name`. */
export const script = (name: string) => `${root}test/python/${name}`;

/** Runs test/python/`name` under `run --output OUT ...extra`; OUT is returned with the job's output. */
export async function runPython(
  name: string,
  extra: string[] = [],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string; out: string }> {
  const out = tempDir();
  const r = await stompwatch([
    "run",
    "--output",
    out,
    ...extra,
    "--",
    "python3",
    script(name),
  ], env);
  return { ...r, out };
}
