import assert from "node:assert/strict";
import { get, PROCESS, setup } from "./_fake_service.ts";

Deno.test("GET /processes lists the traced processes", async () => {
  const { app } = setup();
  assert.deepEqual(await get(app, "/processes"), {
    status: 200,
    json: { processes: [PROCESS] },
  });
});

Deno.test("GET /health answers ok with the daemon's facts", async () => {
  const { app } = setup();
  assert.deepEqual(await get(app, "/health"), {
    status: 200,
    json: {
      ok: true,
      outputDir: "/out",
      ringDir: "/out/rings",
      pid: 99,
      version: "0.1.0",
    },
  });
});
