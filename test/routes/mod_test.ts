import assert from "node:assert/strict";
import { createApp } from "../../routes/mod.ts";
import { timingSafeEqualString } from "../../routes/_auth.ts";
import type { MemoryService } from "../../analysis/memory_api.ts";
import { FakeService, get, post, setup } from "./_fake_service.ts";

const TOKEN = "c2VjcmV0LXRva2VuLTEyMzQ1Njc4OTA";
const REFUSED = {
  status: 401,
  json: {
    error:
      "Missing or wrong bearer token: read it from OUT/token and send Authorization: Bearer <token>",
  },
};

Deno.test("without a token every route answers without Authorization", async () => {
  const { app } = setup();
  assert.equal((await get(app, "/watches")).status, 200);
  assert.equal((await get(app, "/processes")).status, 200);
});

Deno.test("with a token a request without Authorization gets 401", async () => {
  const { app, service } = setup({ token: TOKEN });
  assert.deepEqual(await get(app, "/watches"), REFUSED);
  assert.deepEqual(await post(app, "/watch", { pid: 1 }), REFUSED);
  assert.deepEqual(service.calls, []);
  const response = await app.request("/processes");
  assert.equal(
    response.headers.get("WWW-Authenticate"),
    'Bearer realm="stompwatch"',
  );
  await response.body?.cancel();
});

Deno.test("with a token a wrong, shorter, longer or non-bearer credential gets 401", async () => {
  const { app } = setup({ token: TOKEN });
  for (
    const authorization of [
      "Bearer wrong",
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Bearer ${TOKEN}x`,
      `Basic ${TOKEN}`,
      TOKEN,
      "Bearer ",
      "",
    ]
  ) {
    assert.deepEqual(
      await get(app, "/watches", { Authorization: authorization }),
      REFUSED,
      authorization,
    );
  }
});

Deno.test("with a token the right bearer credential is let through", async () => {
  const { app } = setup({ token: TOKEN });
  assert.equal(
    (await get(app, "/watches", { Authorization: `Bearer ${TOKEN}` })).status,
    200,
  );
  assert.equal(
    (await get(app, "/watches", { Authorization: `bearer ${TOKEN}` })).status,
    200,
  );
});

Deno.test("with a token GET /health without one says only that the daemon is up", async () => {
  const { app, service } = setup({ token: TOKEN });
  assert.deepEqual(await get(app, "/health"), {
    status: 200,
    json: { ok: true },
  });
  assert.deepEqual(
    await get(app, "/health", { Authorization: "Bearer wrong" }),
    { status: 200, json: { ok: true } },
  );
  assert.deepEqual(service.calls, []);
  assert.deepEqual(await post(app, "/health", {}), REFUSED);
});

Deno.test("with a token GET /health with it shows the daemon's files and pid", async () => {
  const { app } = setup({ token: TOKEN });
  const { status, json } = await get(app, "/health", {
    Authorization: `Bearer ${TOKEN}`,
  });
  assert.equal(status, 200);
  assert.deepEqual(json, {
    ok: true,
    outputDir: "/out",
    ringDir: "/out/rings",
    pid: 99,
    version: "0.1.0",
  });
});

Deno.test("with a token an unknown route without the token gets 401, not the route list", async () => {
  const { app } = setup({ token: TOKEN });
  assert.deepEqual(await get(app, "/nope"), REFUSED);
});

Deno.test("an unknown route answers 404 listing the endpoints", async () => {
  const { app } = setup();
  const { status, json } = await get(app, "/nope");
  assert.equal(status, 404);
  assert.equal(
    json.error,
    "Unknown route: GET /nope; endpoints are POST /watch, POST /remove, GET /watches, GET /watches/{name}, GET /dumps, GET /dumps/{file}, GET /processes, GET /processes/{pid}/blocks, GET /health",
  );
  assert.deepEqual(json.endpoints, [
    "POST /watch",
    "POST /remove",
    "GET /watches",
    "GET /watches/{name}",
    "GET /dumps",
    "GET /dumps/{file}",
    "GET /processes",
    "GET /processes/{pid}/blocks",
    "GET /health",
  ]);
});

Deno.test("the 404 lists the memory routes exactly when they are mounted", async () => {
  const app = createApp(new FakeService(), {
    memory: {} as MemoryService,
    logError: () => {},
  });
  const { json } = await get(app, "/nope");
  assert.deepEqual((json.endpoints as string[]).slice(-5), [
    "POST /marks",
    "GET /leaks",
    "GET /fluctuation",
    "POST /check_leaks",
    "GET /snapshot",
  ]);
});

Deno.test("a known path with the wrong method answers 404 listing the endpoints", async () => {
  const { app } = setup();
  const { status, json } = await get(app, "/watch");
  assert.equal(status, 404);
  assert.match(
    String(json.error),
    /^Unknown route: GET \/watch; endpoints are POST \/watch/,
  );
});

Deno.test("createApp refuses an empty token", () => {
  assert.throws(
    () => createApp(new FakeService(), { token: "" }),
    /Cannot create the HTTP API: the bearer token is empty/,
  );
});

Deno.test("timingSafeEqualString tells equal strings from every kind of difference", () => {
  assert.equal(timingSafeEqualString(TOKEN, TOKEN), true);
  assert.equal(timingSafeEqualString("abc", "abd"), false);
  assert.equal(timingSafeEqualString("ab", "abc"), false);
  assert.equal(timingSafeEqualString("abcd", "abc"), false);
  assert.equal(timingSafeEqualString("", "abc"), false);
  assert.equal(timingSafeEqualString("é", "e\u0301"), false);
});
