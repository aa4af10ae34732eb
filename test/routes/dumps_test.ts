import assert from "node:assert/strict";
import type { DumpInfo } from "../../watch/types.ts";
import { get, setup } from "./_fake_service.ts";

const BIN = "0_1234_Copy_1-w_0_after.bin";
const CSV = "watch_dump_data_check_sum_0_20260102030405.csv";
const BYTES = new Uint8Array([0, 1, 2, 255, 10, 13]);

/** A temp directory holding a dump dir, a secret outside it, and a setup over it. */
function withDumpDir() {
  const root = Deno.makeTempDirSync({ prefix: "stompwatch_routes_" });
  const dumpDir = `${root}/watch_dump`;
  Deno.mkdirSync(dumpDir);
  Deno.writeFileSync(`${dumpDir}/${BIN}`, BYTES);
  Deno.writeTextFileSync(`${dumpDir}/${CSV}`, "Tensor info,Check data sum\n");
  Deno.writeTextFileSync(`${dumpDir}/watch_report.json`, '{"watches":[]}');
  Deno.writeTextFileSync(`${root}/secret`, "outside");
  Deno.mkdirSync(`${dumpDir}/sub`);
  Deno.symlinkSync(`${root}/secret`, `${dumpDir}/link.bin`);
  const env = setup({ dumpDir });
  return {
    ...env,
    root,
    dumpDir,
    [Symbol.dispose]: () => Deno.removeSync(root, { recursive: true }),
  };
}

async function download(path: string) {
  using env = withDumpDir();
  const response = await env.app.request(path);
  return {
    status: response.status,
    type: response.headers.get("Content-Type"),
    length: response.headers.get("Content-Length"),
    bytes: new Uint8Array(await response.arrayBuffer()),
  };
}

async function refused(path: string, status: number, message: RegExp) {
  using env = withDumpDir();
  const { status: got, json } = await get(env.app, path);
  assert.equal(got, status, `${path}: ${JSON.stringify(json)}`);
  assert.match(String(json.error), message);
}

Deno.test("GET /dumps lists what the service reports", async () => {
  const { app, service } = setup();
  const dump: DumpInfo = {
    file: BIN,
    kind: "bin",
    pid: 4242,
    device: 0,
    bytes: 6,
    name: "w",
    op: "Copy",
  };
  service.dumps = [dump];
  assert.deepEqual(await get(app, "/dumps"), {
    status: 200,
    json: { dumps: [dump] },
  });
  assert.deepEqual(service.calls, [["listDumps", {}]]);
});

Deno.test("GET /dumps passes name, op and pid filters to the service", async () => {
  const { app, service } = setup();
  assert.equal(
    (await get(app, "/dumps?name=w&op=0%2F0_Mul&pid=4242")).status,
    200,
  );
  assert.deepEqual(service.calls, [["listDumps", {
    name: "w",
    op: "0/0_Mul",
    pid: 4242,
  }]]);
});

Deno.test("GET /dumps refuses a bad pid and unknown filters", async () => {
  const { app } = setup();
  assert.deepEqual(await get(app, "/dumps?pid=x"), {
    status: 400,
    json: { error: 'Invalid pid: "x" is not a positive integer' },
  });
  assert.deepEqual(await get(app, "/dumps?device=0"), {
    status: 400,
    json: {
      error:
        'Unknown query parameter: "device"; GET /dumps accepts name, op, pid',
    },
  });
});

Deno.test("GET /dumps/{file} streams a .bin file byte for byte", async () => {
  const got = await download(`/dumps/${BIN}`);
  assert.deepEqual(got, {
    status: 200,
    type: "application/octet-stream",
    length: "6",
    bytes: BYTES,
  });
});

Deno.test("GET /dumps/{file} serves the checksum CSV as text/csv and the report as JSON", async () => {
  const csv = await download(`/dumps/${CSV}`);
  assert.equal(csv.status, 200);
  assert.equal(csv.type, "text/csv; charset=utf-8");
  assert.equal(
    new TextDecoder().decode(csv.bytes),
    "Tensor info,Check data sum\n",
  );
  assert.equal(
    (await download("/dumps/watch_report.json")).type,
    "application/json",
  );
});

Deno.test("GET /dumps/{file} answers 404 for a file that does not exist", async () => {
  await refused(
    "/dumps/0_1_Mul_1-w_0_after.bin",
    404,
    /^No such dump file: 0_1_Mul_1-w_0_after.bin; use a name from GET \/dumps$/,
  );
});

Deno.test("GET /dumps/{file} refuses names that are not plain file names", async () => {
  for (
    const name of [
      "..%2Fsecret",
      "%2Fetc%2Fpasswd",
      "a%00b",
    ]
  ) {
    await refused(
      `/dumps/${name}`,
      400,
      /^Invalid dump file name: ".*" is not a plain file name; use a name from GET \/dumps$/,
    );
  }
});

Deno.test("GET /dumps/{file} serves a file whose watch name holds a backslash, as GET /dumps lists it", async () => {
  using env = withDumpDir();
  const name = "0_1234_Copy_1-c\\d_0_after.bin";
  Deno.writeFileSync(`${env.dumpDir}/${name}`, BYTES);
  const response = await env.app.request(`/dumps/${encodeURIComponent(name)}`);
  assert.equal(response.status, 200);
  assert.deepEqual(new Uint8Array(await response.arrayBuffer()), BYTES);
});

Deno.test("GET /dumps/{file} answers 404, not 500, for a name longer than any file name", async () => {
  await refused(
    `/dumps/${"x".repeat(5000)}`,
    404,
    /^No such dump file: the name is 5000 bytes long, no file name is longer than 255; use a name from GET \/dumps$/,
  );
  await refused(`/dumps/${"x".repeat(256)}`, 404, /^No such dump file: /);
});

Deno.test("GET /dumps/{file} refuses a symbolic link out of the dump directory", async () => {
  await refused(
    "/dumps/link.bin",
    400,
    /^Invalid dump file name: "link.bin" is a symbolic link; use a name from GET \/dumps$/,
  );
});

Deno.test("GET /dumps/{file} refuses a directory", async () => {
  await refused(
    "/dumps/sub",
    400,
    /^Invalid dump file name: "sub" is not a regular file;/,
  );
});

Deno.test("GET /dumps/{file} works when the dump directory is reached through a link", async () => {
  using env = withDumpDir();
  Deno.symlinkSync(env.dumpDir, `${env.root}/linked`);
  const { app } = setup({ dumpDir: `${env.root}/linked` });
  const response = await app.request(`/dumps/${BIN}`);
  assert.equal(response.status, 200);
  assert.deepEqual(new Uint8Array(await response.arrayBuffer()), BYTES);
});

Deno.test("GET /dumps/{file} answers 404 while the dump directory does not exist", async () => {
  const { app } = setup({ dumpDir: "/nonexistent/watch_dump" });
  assert.equal((await get(app, `/dumps/${BIN}`)).status, 404);
});

Deno.test("GET /dumps/{file} never serves a file reached through dot segments", async () => {
  for (
    const path of [
      "/dumps/../secret",
      "/dumps/%2e%2e/secret",
      "/dumps/./..",
      "/dumps/..",
    ]
  ) {
    using env = withDumpDir();
    const response = await env.app.request(path);
    const text = await response.text();
    assert.notEqual(response.status, 200, path);
    assert.ok(!text.includes("outside"), path);
  }
});
