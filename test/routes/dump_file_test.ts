import assert from "node:assert/strict";
import { openDump } from "../../routes/_dump_file.ts";
import { HttpError } from "../../routes/_errors.ts";

Deno.test("openDump refuses names no URL can carry but a caller could pass", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_dump_file_" });
  try {
    for (
      const name of ["", ".", "..", "../x", "/etc/passwd", "a\u0000b"]
    ) {
      await assert.rejects(openDump(dir, name), (error: HttpError) => {
        assert.equal(error.status, 400, name);
        assert.match(
          error.message,
          /^Invalid dump file name: .* is not a plain file name; use a name from GET \/dumps$/,
        );
        return true;
      });
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("openDump opens a plain file and reports its size and type", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_dump_file_" });
  try {
    Deno.writeTextFileSync(`${dir}/notes.txt`, "hello");
    const dump = await openDump(dir, "notes.txt");
    assert.equal(dump.size, 5);
    assert.equal(dump.contentType, "application/octet-stream");
    dump.file.close();
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
