import assert from "node:assert/strict";
import { get, setup, watchInfo } from "./_fake_service.ts";

function withWatches() {
  const env = setup();
  env.service.watches = [
    watchInfo("w", 1),
    watchInfo("w", 2),
    watchInfo("a/b", 3),
  ];
  return env;
}

Deno.test("GET /watches lists every watch", async () => {
  const { app } = withWatches();
  const { status, json } = await get(app, "/watches");
  assert.equal(status, 200);
  assert.deepEqual((json.watches as { pid: number }[]).map((w) => w.pid), [
    1,
    2,
    3,
  ]);
});

Deno.test("GET /watches/{name} answers the one watch of that name", async () => {
  const { app } = withWatches();
  const { status, json } = await get(app, "/watches/a%2Fb");
  assert.equal(status, 200);
  assert.deepEqual(json, watchInfo("a/b", 3));
});

Deno.test("GET /watches/{name} answers 409 listing the pids when several have it", async () => {
  const { app } = withWatches();
  const { status, json } = await get(app, "/watches/w");
  assert.equal(status, 409);
  assert.deepEqual(json, {
    error: 'Several watches are named "w": add ?pid= with one of 1, 2',
  });
});

Deno.test("GET /watches/{name}?pid= picks the watch of that process", async () => {
  const { app } = withWatches();
  const { status, json } = await get(app, "/watches/w?pid=2");
  assert.equal(status, 200);
  assert.equal(json.pid, 2);
});

Deno.test("GET /watches/{name} answers 404 for a name or pid with no watch", async () => {
  const { app } = withWatches();
  assert.deepEqual(await get(app, "/watches/nope"), {
    status: 404,
    json: { error: 'Unknown watch: no watch named "nope"; see GET /watches' },
  });
  assert.deepEqual(await get(app, "/watches/w?pid=3"), {
    status: 404,
    json: {
      error: 'Unknown watch: no watch named "w" in pid 3; see GET /watches',
    },
  });
});

Deno.test("GET /watches/{name} refuses a pid that is not a positive integer", async () => {
  const { app } = withWatches();
  for (const pid of ["abc", "0", "-1", "01", "1.5", "", "99999999999"]) {
    const { status, json } = await get(app, `/watches/w?pid=${pid}`);
    assert.equal(status, 400, pid);
    assert.match(
      String(json.error),
      /^Invalid pid: ".*" is not a positive integer$/,
    );
  }
});

Deno.test("GET /watches refuses unknown or repeated query parameters", async () => {
  const { app } = withWatches();
  assert.deepEqual(await get(app, "/watches?name=w"), {
    status: 400,
    json: {
      error:
        'Unknown query parameter: "name"; GET /watches takes no query parameters',
    },
  });
  assert.deepEqual(await get(app, "/watches/w?pid=1&pid=2"), {
    status: 400,
    json: { error: "Repeated query parameter: pid; give it once" },
  });
});
