/**
 * Runs the test jobs of test/python/ under the real `./stompwatch run`.
 *
 * @module
 */
import { stompwatch, tempDir } from "./_harness.ts";

/**
 * The device test/python/_test_device.py puts the device-neutral jobs'
 * tensors on: `cpu` in the suite, `cuda` where test/gpu/prove_cuda.sh runs
 * them on a GPU machine.
 */
export const TORCH_DEVICE = Deno.env.get("STOMPWATCH_TEST_TORCH_DEVICE") ??
  "cpu";

/** What an out-of-memory error on TORCH_DEVICE looks like in the job and in the OOM files. */
export const OOM_ON_DEVICE = TORCH_DEVICE === "cpu"
  ? { error: /DefaultCPUAllocator/, device: "cpu", pool: "HOST" }
  : { error: /CUDA out of memory/, device: "0", pool: "PTA" };

/** The op that SGD's step updates a weight on TORCH_DEVICE with: a CUDA tensor's step is a foreach op by default, a CPU tensor's is not. */
export const SGD_STEP_OP = TORCH_DEVICE === "cpu"
  ? "torch._ops.aten.add_.Tensor"
  : "torch._ops.aten._foreach_add_.List";

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
