/**
 * GET /processes/{pid}/blocks against a job that really runs: the address
 * a curl user needs comes from the list, and POST /watch takes it.
 */
import assert from "node:assert/strict";
import {
  eventually,
  requestSocket,
  Spawned,
  startDaemonProcess,
  STOMPWATCH,
  tempDir,
  workload,
} from "./_harness.ts";
import type { BlockInfo, BlockList, ProcessInfo } from "../../watch/types.ts";

interface BlocksJob {
  socket: string;
  pid: number;
  a: bigint;
  b: bigint;
  c: bigint;
}

/** Runs the blocks workload under a fresh daemon, paused while `fn` runs. */
async function withBlocksJob(fn: (job: BlocksJob) => Promise<void>) {
  const out = tempDir();
  const daemon = await startDaemonProcess(out);
  const socket = `${out}/stompwatch.sock`;
  const gate = `${tempDir()}/go`;
  const job = new Spawned(STOMPWATCH, [
    "run",
    "--daemon",
    socket,
    "--",
    workload("blocks"),
    "--wait-file",
    gate,
  ]);
  try {
    const m = await job.line(/^blocks: A=(0x\w+) B=(0x\w+) C=(0x\w+)$/);
    const [a, b, c] = [m[1], m[2], m[3]].map(BigInt);
    await job.line(/^ready$/);
    const pid = await eventually(async () => {
      const r = await requestSocket(socket, "GET", "/processes");
      const procs = (r.body as { processes: ProcessInfo[] }).processes;
      return procs.find((p) => p.command.includes(gate))?.pid;
    });
    await fn({ socket, pid, a, b, c });
    Deno.writeTextFileSync(gate, "");
    assert.equal((await job.done).code, 0, job.stderr);
  } finally {
    Deno.writeTextFileSync(gate, "");
    daemon.child.kill("SIGTERM");
    await daemon.done;
  }
}

Deno.test("GET /processes/{pid}/blocks lists each live block with its call and op, newest first, and POST /watch takes its address", async () => {
  await withBlocksJob(async ({ socket, pid, a, b, c }) => {
    const list = async (query = "") => {
      const r = await requestSocket(
        socket,
        "GET",
        `/processes/${pid}/blocks${query}`,
      );
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body as BlockList;
    };
    // Every block was allocated before "ready": the first answer has them.
    const all = await list();
    assert.equal(all.pid, pid);
    assert.equal(all.liveAllocations, 4);
    assert.equal(all.matched, 4);
    const shown = all.blocks.map((
      { addr, size, device, pool, owner, op, call }: BlockInfo,
    ) => ({ addr: BigInt(addr), size, device, pool, owner, op, call }));
    const block = { device: 0, pool: "HAL", owner: null };
    assert.deepEqual(shown.slice(0, 3), [
      { ...block, addr: c, size: 64, op: "Fill", call: "aclrtMallocAlign32" },
      { ...block, addr: b, size: 1024, op: "Fill", call: "aclrtMallocCached" },
      { ...block, addr: a, size: 256, op: null, call: "aclrtMalloc" },
    ]);
    assert.deepEqual(
      all.blocks.map((x) => x.allocationId),
      [4, 3, 2, 1],
    );
    for (const x of all.blocks) {
      assert.match(x.addr, /^0x[0-9a-f]{12,}$/);
      assert.ok(Number.isInteger(x.ageMs) && x.ageMs >= 0, String(x.ageMs));
    }
    // Filters and the limit.
    const sizes = async (query: string) =>
      (await list(query)).blocks.map((x) => x.size);
    assert.deepEqual(await sizes("?min_size=256"), [1024, 256]);
    assert.deepEqual(await sizes("?pool=HOST"), []);
    assert.deepEqual(await sizes("?device=1"), []);
    assert.deepEqual(await sizes("?device=0&pool=HAL&limit=2"), [64, 1024]);
    assert.equal((await list("?limit=1")).matched, 4);
    // The address from the list is what POST /watch takes.
    const watch = await requestSocket(socket, "POST", "/watch", {
      pid,
      name: "b",
      addr: all.blocks[1].addr,
      length: all.blocks[1].size,
    });
    assert.equal(watch.status, 201, JSON.stringify(watch.body));
    const unknown = await requestSocket(socket, "GET", "/processes/1/blocks");
    assert.equal(unknown.status, 404);
    assert.match(
      (unknown.body as { error: string }).error,
      /^Unknown pid: 1 is not a traced process/,
    );
  });
});

Deno.test("POST /watch refuses a second name that gives the same dump file names, naming the first", async () => {
  await withBlocksJob(async ({ socket, pid, a, c }) => {
    const first = await requestSocket(socket, "POST", "/watch", {
      pid,
      name: "c/d",
      addr: `0x${a.toString(16)}`,
      length: 64,
    });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const second = await requestSocket(socket, "POST", "/watch", {
      pid,
      name: "c.d",
      addr: `0x${c.toString(16)}`,
      length: 64,
    });
    assert.equal(second.status, 409);
    assert.equal(
      (second.body as { error: string }).error,
      `Cannot watch block: pid ${pid} already has a watch named "c/d", whose dump files would have the same names ("/" and control characters become "." in file names); remove it first or pick another name`,
    );
  });
});
