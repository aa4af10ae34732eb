import assert from "node:assert/strict";
import { MAX_BODY_BYTES } from "../../routes/_body.ts";
import { setup } from "./_fake_service.ts";

const TOO_LARGE = /^Request body too large: .*at most 1048576 bytes are read/;

/** A body that yields `chunk` `times` times, then never ends; counts what was read. */
function endless(chunk: Uint8Array, times: number) {
  const seen = { bytes: 0 };
  let left = times;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (left-- <= 0) return new Promise(() => {}); // never ends
      seen.bytes += chunk.length;
      controller.enqueue(chunk);
    },
  });
  return { stream, seen };
}

Deno.test("a body whose Content-Length is over 1 MiB gets 413 before any of it is read", async () => {
  const { app, service } = setup();
  const { stream, seen } = endless(new Uint8Array(1024), 1);
  const response = await app.request("/watch", {
    method: "POST",
    body: stream,
    headers: { "Content-Length": String(50 * MAX_BODY_BYTES) },
    duplex: "half",
  } as RequestInit);
  assert.equal(response.status, 413);
  assert.match((await response.json()).error, TOO_LARGE);
  assert.equal(seen.bytes <= 1024, true);
  assert.deepEqual(service.calls, []);
});

Deno.test("a chunked body without Content-Length gets 413 once it passes 1 MiB, and is not read to its end", async () => {
  const { app, service } = setup();
  // Never ends: answering at all proves the reading stopped at the cap.
  const { stream, seen } = endless(new Uint8Array(64 * 1024).fill(32), 1000);
  const response = await app.request("/watch", {
    method: "POST",
    body: stream,
    duplex: "half",
  } as RequestInit);
  assert.equal(response.status, 413);
  assert.match((await response.json()).error, TOO_LARGE);
  assert.ok(seen.bytes <= MAX_BODY_BYTES + 2 * 64 * 1024, String(seen.bytes));
  assert.deepEqual(service.calls, []);
});

Deno.test("a body of exactly 1 MiB is read", async () => {
  const { app, service } = setup();
  const body = JSON.stringify({
    pid: 4242,
    name: "w",
    addr: "0x1000",
    length: 64,
  });
  const padded = body.slice(0, -1) + " ".repeat(MAX_BODY_BYTES - body.length) +
    "}";
  const response = await app.request("/watch", {
    method: "POST",
    body: padded,
  });
  assert.equal(response.status, 201);
  assert.equal(service.calls.length, 1);
});

Deno.test("a body that stops coming gets 408 once BODY_TIMEOUT_MS has passed, and the service is not called", async () => {
  const { app, service } = setup();
  const { stream } = endless(new TextEncoder().encode("{"), 1);
  const response = await app.request("/watch", {
    method: "POST",
    body: stream,
    headers: { "Content-Length": "1000" },
    duplex: "half",
  } as RequestInit);
  assert.equal(response.status, 408);
  assert.match(
    (await response.json()).error,
    /^Request body not received in time: 1 bytes came in 10 s; send the whole body at once$/,
  );
  assert.deepEqual(service.calls, []);
});

Deno.test("on TCP a request without the token is refused before any of its body is read", async () => {
  const { app, service } = setup({ token: "s3cret" });
  const { stream, seen } = endless(new Uint8Array(1024), 1);
  const response = await app.request("/watch", {
    method: "POST",
    body: stream,
    headers: { "Content-Length": "1000" },
    duplex: "half",
  } as RequestInit);
  assert.equal(response.status, 401);
  assert.ok(seen.bytes <= 1024);
  assert.deepEqual(service.calls, []);
});
