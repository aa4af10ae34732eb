import assert from "node:assert/strict";
import type { AllocEvent } from "../../analysis/events.ts";
import { EventLog } from "../../daemon/event_log.ts";
import {
  CPU_DEVICE,
  MemoryRows,
  readMemoryRows,
} from "../../analysis/snapshot/rows.ts";
import { writeOomFiles } from "../../analysis/snapshot/oom.ts";

const PID = 4242;
let id = 0;
let ts = 1764753083997498270;

/** An allocation of `pid` on `device` (-1: host memory). */
function alloc(device: number, addr: number, pid = PID): AllocEvent {
  return {
    kind: "alloc",
    pid,
    tid: pid + 1,
    ts: ts += 1000,
    device,
    addr,
    size: 4096,
    pool: device < 0 ? "HOST" : "HAL",
    result: 0,
    allocationId: ++id,
  };
}

/** Host memory, device 0, host, device 1, host: the process's order. */
function twoDeviceLog(): { log: EventLog; dir: string } {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_logs_of_" });
  const log = new EventLog(dir, new Date(2026, 10, 25, 6, 0, 0));
  for (
    const [device, addr] of [
      [-1, 0x7f0000001000],
      [0, 0x124000000000],
      [-1, 0x7f0000002000],
      [1, 0x125000000000],
      [-1, 0x7f0000003000],
    ]
  ) log.onEvent(alloc(device, addr));
  return { log, dir };
}

async function hostRowsRead(
  logs: ReadonlyArray<{ path: string; hostRows: boolean }>,
): Promise<number> {
  const rows = new MemoryRows();
  for (const l of logs) {
    await readMemoryRows(l.path, {
      pid: PID,
      into: rows,
      hostRows: l.hostRows,
    });
  }
  let host = 0;
  for (let i = 0; i < rows.count; i++) {
    if (rows.device(i) === CPU_DEVICE) host++;
  }
  return host;
}

Deno.test("a process's logs read with logsOf give each host row once, though every device log holds copies", async () => {
  const { log, dir } = twoDeviceLog();
  const logs = log.logsOf(PID);
  assert.deepEqual(
    logs.map((l) => [l.device, l.hostRows]),
    [[0, true], [1, false]],
  );
  // Each device log holds the host rows from when the process took it up.
  assert.equal(
    await hostRowsRead(logs.map((l) => ({ ...l, hostRows: true }))),
    4,
  );
  assert.equal(await hostRowsRead(logs), 3);
  log.close();
  // The process is gone from the routes once the log closes: still right.
  assert.equal(await hostRowsRead(log.logsOf(PID)), 3);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("a process that never used a device has its host rows read from host/", () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_logs_of_" });
  const log = new EventLog(dir, new Date(2026, 10, 25, 6, 0, 0));
  log.onEvent(alloc(-1, 0x7f0000001000, 77));
  log.onEvent(alloc(0, 0x124000000000));
  const logs = log.logsOf(77);
  assert.deepEqual(
    logs.map((l) => [l.device, l.hostRows]),
    [[0, false], ["host", true]],
  );
  log.close();
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("the OOM snapshot of a process holds every device it used, and each host block once", async () => {
  const { log, dir } = twoDeviceLog();
  const failing = log.pathOf(PID, 1)!;
  const logs = log.logsOf(PID);
  const { snapshot } = await writeOomFiles({
    log: failing,
    logs,
    pid: PID,
    device: 1,
    mode: 1,
    dir,
    at: new Date(2026, 10, 25, 6, 0, 1),
    untilNs: ts + 1,
  });
  log.close();
  const out = await new Deno.Command("python3", {
    args: [
      "-c",
      `import pickle, sys
s = pickle.load(open(sys.argv[1], "rb"))
print([sum(1 for e in t if e["action"] == "alloc") for t in s["device_traces"]])`,
      snapshot,
    ],
    stdout: "piped",
  }).output();
  // Devices 0 and 1 one block each, the CPU (index 2) three.
  assert.equal(new TextDecoder().decode(out.stdout).trim(), "[1, 1, 3]");
  Deno.removeSync(dir, { recursive: true });
});
