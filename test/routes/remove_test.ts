import assert from "node:assert/strict";
import { post, setup, watchInfo } from "./_fake_service.ts";

function withWatches() {
  const env = setup();
  env.service.watches = [
    watchInfo("w", 1),
    watchInfo("w", 2),
    watchInfo("v", 1),
  ];
  return env;
}

async function rejects(body: unknown, message: RegExp): Promise<void> {
  const { app, service } = withWatches();
  const { status, json } = await post(app, "/remove", body);
  assert.equal(status, 400, JSON.stringify(json));
  assert.match(String(json.error), message);
  assert.deepEqual(service.calls, []);
}

Deno.test("POST /remove by name answers 200 with what was removed", async () => {
  const { app, service } = withWatches();
  const { status, json } = await post(app, "/remove", { name: "w" });
  assert.equal(status, 200);
  assert.deepEqual((json.removed as { pid: number }[]).map((w) => w.pid), [
    1,
    2,
  ]);
  assert.deepEqual(service.calls, [["removeWatch", { name: "w" }]]);
});

Deno.test("POST /remove by name and pid passes both on", async () => {
  const { app, service } = withWatches();
  const { status, json } = await post(app, "/remove", { name: "w", pid: 2 });
  assert.equal(status, 200);
  assert.equal((json.removed as unknown[]).length, 1);
  assert.deepEqual(service.calls[0][1], { name: "w", pid: 2 });
});

Deno.test("POST /remove by addr and length reads them like POST /watch", async () => {
  const { app, service } = withWatches();
  const body = { addr: "0x12c0000", length: "4096", pid: 1 };
  assert.equal((await post(app, "/remove", body)).status, 200);
  assert.deepEqual(service.calls[0][1], {
    addr: 0x12c0000n,
    length: 4096n,
    pid: 1,
  });
});

Deno.test("POST /remove refuses a body naming both a name and a range", async () => {
  await rejects(
    { name: "w", addr: "0x1", length: 1 },
    /^Conflicting fields: give either name, or addr and length, not both$/,
  );
});

Deno.test("POST /remove refuses a body naming no watch", async () => {
  await rejects(
    {},
    /^Missing field name: give the watch's name, or addr and length$/,
  );
  await rejects({ pid: 1 }, /^Missing field name:/);
  await rejects({ name: null }, /^Missing field name:/);
});

Deno.test("POST /remove refuses half a range", async () => {
  await rejects({ addr: "0x12c0000" }, /^Missing field length:/);
  await rejects({ length: 4096 }, /^Missing field addr:/);
});

Deno.test("POST /remove refuses bad names, pids, addresses and unknown fields", async () => {
  await rejects(
    { name: "n".repeat(65) },
    /^Invalid name: it is 65 characters long/,
  );
  await rejects({ name: "" }, /^Invalid name: it is empty/);
  await rejects(
    { name: "w", pid: 0 },
    /^Invalid pid: number 0 is not a positive integer$/,
  );
  await rejects({ addr: "zz", length: 1 }, /^Invalid addr:/);
  await rejects({ addr: "0x1", length: 0 }, /^Invalid length: it is 0/);
  await rejects(
    { name: "w", dump_nums: 1 },
    /^Unknown field: "dump_nums"; POST \/remove accepts name, addr, length, pid$/,
  );
  await rejects("name=w", /^Body is not JSON:/);
});

Deno.test("POST /remove keeps the service's 404 for a watch that does not exist", async () => {
  const { app } = withWatches();
  const { status, json } = await post(app, "/remove", { name: "nope" });
  assert.equal(status, 404);
  assert.deepEqual(json, { error: "Unknown watch: nothing matched" });
});
