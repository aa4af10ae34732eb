/**
 * The job loads only job code: the preloaded library exports the interposed
 * ACL and mstx entries, the allocator entries it records CPU storages from,
 * and the producer API, nothing of the daemon's side
 * (ring consumer, ring directory, event rows), and the daemon's library
 * interposes nothing.
 */
import assert from "node:assert/strict";
import { DAEMON_LIBRARY, HOOK_LIBRARY } from "../../ffi/bindings.ts";

/** The functions a shared library exports, as `nm -D` lists them. */
async function exported(path: string): Promise<string[]> {
  const out = await new Deno.Command("nm", {
    args: ["-D", "--defined-only", path],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).split("\n")
    .map((l) => l.split(" "))
    .filter((f) => f.length === 3 && f[1] === "T")
    .map((f) => f[2])
    .sort();
}

Deno.test("the preloaded library exports the interposers and the producer API, and no daemon code", async () => {
  assert.deepEqual(await exported(HOOK_LIBRARY), [
    "InitInjectionMstx",
    "aclopCompileAndExecute",
    "aclopExecuteV2",
    "aclrtFree",
    "aclrtMalloc",
    "aclrtMallocAlign32",
    "aclrtMallocCached",
    "aclrtSetDevice",
    "free",
    "mstxMarkA",
    "mstxRangeEnd",
    "mstxRangeStartA",
    "posix_memalign",
    "stompwatch_alloc_failed",
    "stompwatch_attached",
    "stompwatch_cli_start",
    "stompwatch_emit",
    "stompwatch_emit_batch",
    "stompwatch_host_block",
    "stompwatch_host_flush",
    "stompwatch_host_intercepting",
    "stompwatch_host_op_name",
    "stompwatch_host_recorded",
    "stompwatch_host_recording",
    "stompwatch_host_unpin",
    "stompwatch_may_sample",
    "stompwatch_op_begin",
    "stompwatch_op_end",
    "stompwatch_set_copier",
    "stompwatch_wait_consumed",
  ]);
});

Deno.test("the daemon's library exports what bindings.ts calls and interposes nothing", async () => {
  const daemon = await exported(DAEMON_LIBRARY);
  assert.deepEqual(
    daemon.filter((s) => /^(acl|mstx|Init|free$|posix_memalign$)/.test(s)),
    [],
  );
  for (
    const name of [
      "stompwatch_ring_attach",
      "stompwatch_table_publish",
      "stompwatch_dir_rings",
      "stompwatch_memory_row",
      "stompwatch_watch_spec_parse",
      "stompwatch_layout",
    ]
  ) assert.ok(daemon.includes(name), `${name} in ${daemon.join(" ")}`);
});
