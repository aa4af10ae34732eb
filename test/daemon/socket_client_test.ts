import assert from "node:assert/strict";
import { requestSocket } from "../../daemon/socket_client.ts";

Deno.test("a request to a daemon that accepts but never answers (stopped) is given up after its timeout", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_socket_" });
  const path = `${dir}/stompwatch.sock`;
  const listener = Deno.listen({ transport: "unix", path });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn); // read nothing, answer nothing
  })();
  // Without a timeout the request never settles: the sentinel wins the race.
  let sentinel: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<"hung">((r) =>
    sentinel = setTimeout(r, 30_000, "hung")
  );
  const outcome = await Promise.race([
    requestSocket(path, "GET", "/health", undefined, { timeoutMs: 300 })
      .then(() => "answered", () => "gave up"),
    hung,
  ]);
  clearTimeout(sentinel);
  assert.equal(outcome, "gave up");
  listener.close();
  await accepting.catch(() => {});
  for (const c of held) c.close();
  Deno.removeSync(dir, { recursive: true });
});
