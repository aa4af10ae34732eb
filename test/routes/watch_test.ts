import assert from "node:assert/strict";
import { ServiceError } from "../../watch/types.ts";
import { post, setup } from "./_fake_service.ts";

const valid = { pid: 4242, name: "w", addr: "0x12c0000", length: 4096 };

async function rejects(body: unknown, message: RegExp): Promise<void> {
  const { app, service } = setup();
  const { status, json } = await post(app, "/watch", body);
  assert.equal(status, 400, JSON.stringify(json));
  assert.match(String(json.error), message);
  assert.deepEqual(Object.keys(json), ["error"]);
  assert.deepEqual(service.calls, []);
}

Deno.test("POST /watch answers 201 with the watch and passes a typed request to the service", async () => {
  const { app, service } = setup();
  const { status, json } = await post(app, "/watch", valid);
  assert.equal(status, 201);
  assert.equal(json.name, "w");
  assert.equal(json.addr, "0x12c0000");
  assert.deepEqual(service.calls, [["addWatch", {
    pid: 4242,
    name: "w",
    addr: 0x12c0000n,
    length: 4096n,
    dumpNums: -1,
    fullContent: false,
  }]]);
});

Deno.test("POST /watch takes every option", async () => {
  const { app, service } = setup();
  const body = {
    ...valid,
    dump_nums: 4,
    full_content: true,
    start: "Fill",
    end: "0/0_Mul",
  };
  assert.equal((await post(app, "/watch", body)).status, 201);
  assert.deepEqual(service.calls[0][1], {
    pid: 4242,
    name: "w",
    addr: 0x12c0000n,
    length: 4096n,
    dumpNums: 4,
    fullContent: true,
    start: "Fill",
    end: "0/0_Mul",
  });
});

Deno.test("POST /watch reads addr and length as hex, decimal strings or numbers", async () => {
  const { app, service } = setup();
  for (
    const [addr, length] of [
      ["0X12C0000", "0x1000"],
      ["19660800", "4096"],
      [19660800, 4096],
      ["0xffffffffffff0000", "0x10000"],
    ]
  ) {
    assert.equal(
      (await post(app, "/watch", { ...valid, addr, length })).status,
      201,
    );
  }
  const requests = service.calls.map(([, r]) =>
    r as { addr: bigint; length: bigint }
  );
  assert.deepEqual(requests.map((r) => [r.addr, r.length]), [
    [0x12c0000n, 4096n],
    [0x12c0000n, 4096n],
    [0x12c0000n, 4096n],
    [0xffffffffffff0000n, 0x10000n],
  ]);
});

Deno.test("POST /watch treats null optional fields as absent", async () => {
  const { app, service } = setup();
  const body = {
    ...valid,
    dump_nums: null,
    full_content: null,
    start: null,
    end: null,
  };
  assert.equal((await post(app, "/watch", body)).status, 201);
  assert.deepEqual(service.calls[0][1], {
    pid: 4242,
    name: "w",
    addr: 0x12c0000n,
    length: 4096n,
    dumpNums: -1,
    fullContent: false,
  });
});

Deno.test("POST /watch refuses a body that is not a JSON object", async () => {
  await rejects(
    "pid=4242&name=w",
    /^Body is not JSON: .*; POST \/watch takes a JSON object with fields pid, name/,
  );
  await rejects("", /^Body is not JSON: the body is empty;/);
  await rejects([valid], /^Body is not a JSON object: got an array;/);
  await rejects("42", /^Body is not a JSON object: got number 42;/);
  await rejects("null", /^Body is not a JSON object: got null;/);
});

Deno.test("POST /watch refuses unknown fields, naming the accepted ones", async () => {
  await rejects(
    { ...valid, dumpnums: 4 },
    /^Unknown field: "dumpnums"; POST \/watch accepts pid, name, addr, length, dump_nums, full_content, start, end$/,
  );
  await rejects(
    JSON.stringify(valid).replace("{", '{"__proto__":1,'),
    /^Unknown field: "__proto__"/,
  );
});

Deno.test("POST /watch refuses a missing, empty, non-string or too long name", async () => {
  const { name: _, ...noName } = valid;
  await rejects(
    noName,
    /^Missing field name: give the watch a name of 1 to 64 characters$/,
  );
  await rejects({ ...valid, name: null }, /^Missing field name:/);
  await rejects({ ...valid, name: 7 }, /^Invalid name: got number 7;/);
  await rejects({ ...valid, name: "" }, /^Invalid name: it is empty;/);
  await rejects(
    { ...valid, name: "n".repeat(65) },
    /^Invalid name: it is 65 characters long;/,
  );
  await rejects(
    { ...valid, name: "算".repeat(33) },
    /^Invalid name: it takes 99 bytes in UTF-8, at most 96/,
  );
  await rejects(
    { ...valid, name: "a\u0000b" },
    /^Invalid name: it contains a control character$/,
  );
  // "\ud800" and "\udc00" would both become U+FFFD in a file name.
  await rejects(
    { ...valid, name: "w\ud800" },
    /^Invalid name: it holds a lone UTF-16 surrogate, which no file name can carry$/,
  );
});

Deno.test("POST /watch accepts a name of exactly 64 characters", async () => {
  const { app } = setup();
  assert.equal(
    (await post(app, "/watch", { ...valid, name: "n".repeat(64) })).status,
    201,
  );
  assert.equal(
    (await post(app, "/watch", { ...valid, name: "é".repeat(48) })).status,
    201,
  );
});

Deno.test("POST /watch refuses a pid that is not a positive integer", async () => {
  const { pid: _, ...noPid } = valid;
  await rejects(
    noPid,
    /^Missing field pid: give the traced process id \(see GET \/processes\)$/,
  );
  for (const pid of [0, -1, 1.5, "4242", true, null, 2147483648]) {
    await rejects(
      { ...valid, pid },
      /^Invalid pid: .* is not a positive integer$/,
    );
  }
});

Deno.test("POST /watch refuses an addr it cannot read", async () => {
  const { addr: _, ...noAddr } = valid;
  await rejects(
    noAddr,
    /^Missing field addr: send a hex string such as "0x12c0000"/,
  );
  for (
    const addr of [
      "xyz",
      "0x",
      "-1",
      "0x-1",
      " 0x10",
      "1e6",
      -1,
      1.5,
      true,
      {},
      "0x10000000000000000",
    ]
  ) {
    await rejects(
      { ...valid, addr },
      /^Invalid addr: .* is not a 64-bit unsigned integer; send a hex string/,
    );
  }
  await rejects(
    { ...valid, addr: 2 ** 53 + 2 },
    /^Invalid addr: 9007199254740994 is beyond 2\^53 .*send it as a hex string$/,
  );
});

Deno.test("POST /watch refuses a length that is not a positive integer", async () => {
  const { length: _, ...noLength } = valid;
  await rejects(
    noLength,
    /^Missing field length: send a positive number of bytes$/,
  );
  await rejects({ ...valid, length: 0 }, /^Invalid length: it is 0;/);
  await rejects({ ...valid, length: "0x0" }, /^Invalid length: it is 0;/);
  for (const length of [-4, 1.5, "abc", "4 KiB", false]) {
    await rejects(
      { ...valid, length },
      /^Invalid length: .* is not a 64-bit unsigned integer/,
    );
  }
});

Deno.test("POST /watch refuses a range that runs past the address space", async () => {
  await rejects(
    { ...valid, addr: "0xfffffffffffff000", length: "0x1001" },
    /^Invalid range: addr \+ length runs past/,
  );
  const { app } = setup();
  const edge = { ...valid, addr: "0xfffffffffffff000", length: "0x1000" };
  assert.equal((await post(app, "/watch", edge)).status, 201);
});

Deno.test("POST /watch refuses dump_nums of 0, below -1, or not an integer", async () => {
  for (const dump_nums of [0, -2, 1.5, "4", true]) {
    await rejects(
      { ...valid, dump_nums },
      /^Invalid dump_nums: .* is not allowed; use -1 for unlimited or a count of at least 1$/,
    );
  }
  const { app } = setup();
  assert.equal(
    (await post(app, "/watch", { ...valid, dump_nums: -1 })).status,
    201,
  );
  assert.equal(
    (await post(app, "/watch", { ...valid, dump_nums: 1 })).status,
    201,
  );
});

Deno.test("POST /watch refuses a full_content that is not a boolean", async () => {
  for (const full_content of ["true", 1, 0, "yes"]) {
    await rejects(
      { ...valid, full_content },
      /^Invalid full_content: got .*; send true or false$/,
    );
  }
});

Deno.test("POST /watch refuses start and end that are not short op names", async () => {
  for (const field of ["start", "end"]) {
    await rejects(
      { ...valid, [field]: 5 },
      new RegExp(
        `^Invalid ${field}: got number 5; give an op name, or leave ${field} out`,
      ),
    );
    await rejects(
      { ...valid, [field]: "" },
      new RegExp(`^Invalid ${field}: got string ""`),
    );
    await rejects(
      { ...valid, [field]: "x".repeat(96) },
      new RegExp(`^Invalid ${field}: it is longer than 95 bytes$`),
    );
    await rejects(
      { ...valid, [field]: "算".repeat(32) },
      /longer than 95 bytes/,
    );
    await rejects(
      { ...valid, [field]: "a\nb" },
      /contains a control character/,
    );
    await rejects(
      { ...valid, [field]: "a\udc00" },
      new RegExp(`^Invalid ${field}: it holds a lone UTF-16 surrogate$`),
    );
  }
  const { app } = setup();
  assert.equal(
    (await post(app, "/watch", { ...valid, start: "x".repeat(95) })).status,
    201,
  );
});

Deno.test("POST /watch answers the service's errors with the status of their kind and their message", async () => {
  for (
    const [expected, error] of [
      [
        404,
        new ServiceError(
          "not_found",
          "Unknown pid: 4242 is not a traced process",
        ),
      ],
      [
        422,
        new ServiceError(
          "not_live",
          "Cannot watch block: 0x12c0000 is not inside a live allocation of pid 4242; nearest is 0x12b0000 (4096 bytes)",
        ),
      ],
      [
        409,
        new ServiceError(
          "conflict",
          "Cannot watch in pid 4242: it runs with ASCEND_LAUNCH_BLOCKING=0",
        ),
      ],
      [400, new ServiceError("invalid", "Invalid range: nothing fits")],
    ] as const
  ) {
    const { app, service } = setup();
    service.failWith = error;
    const { status, json } = await post(app, "/watch", valid);
    assert.equal(status, expected);
    assert.deepEqual(json, { error: error.message });
  }
});

Deno.test("POST /watch answers a generic 500 for an unexpected error and logs it", async () => {
  const { app, service, logged } = setup();
  service.failWith = new TypeError("secret internals at daemon/registry.ts:42");
  const { status, json } = await post(app, "/watch", valid);
  assert.equal(status, 500);
  assert.deepEqual(json, {
    error:
      "Internal error: the daemon could not handle this request; its log has the details",
  });
  assert.equal(logged.length, 1);
  assert.equal(logged[0], service.failWith);
});
