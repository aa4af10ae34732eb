import assert from "node:assert/strict";
import { BLOCK, get, setup } from "./_fake_service.ts";

Deno.test("GET /processes/{pid}/blocks lists the service's blocks, 100 at most by default", async () => {
  const { app, service } = setup();
  assert.deepEqual(await get(app, "/processes/4242/blocks"), {
    status: 200,
    json: { pid: 4242, liveAllocations: 3, matched: 1, blocks: [BLOCK] },
  });
  assert.deepEqual(service.calls, [["listBlocks", {
    pid: 4242,
    filter: { limit: 100 },
  }]]);
});

Deno.test("GET /processes/{pid}/blocks passes device, pool, min_size and limit", async () => {
  const { app, service } = setup();
  const path =
    "/processes/4242/blocks?device=1&pool=PTA&min_size=4096&limit=10000";
  assert.equal((await get(app, path)).status, 200);
  assert.deepEqual(service.calls[0][1], {
    pid: 4242,
    filter: { device: 1, pool: "PTA", minSize: 4096, limit: 10000 },
  });
});

Deno.test("GET /processes/{pid}/blocks refuses a bad pid, filter or limit with what to send", async () => {
  for (
    const [query, message] of [
      ["limit=0", /^Invalid limit: "0" is not an integer from 1 to 10000$/],
      [
        "limit=10001",
        /^Invalid limit: "10001" is not an integer from 1 to 10000$/,
      ],
      ["limit=", /^Invalid limit: "" is not an integer/],
      ["device=-1", /^Invalid device: "-1" is not an integer from 0/],
      ["min_size=1e3", /^Invalid min_size: "1e3" is not an integer from 0/],
      ["pool=GPU", /^Invalid pool: "GPU"; use one of HAL, HOST, PTA$/],
      ["pool=HAL&pool=PTA", /^Repeated query parameter: pool; give it once$/],
      [
        "size=1",
        /^Unknown query parameter: "size"; GET \/processes\/4242\/blocks accepts device, pool, min_size, limit$/,
      ],
    ] as const
  ) {
    const { app, service } = setup();
    const { status, json } = await get(app, `/processes/4242/blocks?${query}`);
    assert.equal(status, 400, query);
    assert.match(String(json.error), message, query);
    assert.deepEqual(service.calls, []);
  }
  const { app } = setup();
  const { status, json } = await get(app, "/processes/abc/blocks");
  assert.equal(status, 400);
  assert.match(
    String(json.error),
    /^Invalid pid: "abc" is not a positive integer$/,
  );
});
