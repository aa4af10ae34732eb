import assert from "node:assert/strict";
import { runJob } from "../../daemon/run.ts";

Deno.test("runJob takes a relative --daemon socket from the cwd, and names that directory when no daemon serves it", async () => {
  const dir = Deno.realPathSync(Deno.makeTempDirSync());
  const cwd = Deno.cwd();
  Deno.chdir(dir);
  try {
    await assert.rejects(
      runJob({
        command: ["true"],
        outputDir: `${dir}/unused`,
        daemonSocket: "stompwatch.sock",
        checksum: "xxh3",
      }),
      (e: Error) => {
        assert.equal(
          e.message,
          `No daemon found: ${dir}/daemon.json does not exist; start one with ./stompwatch daemon --output ${dir}`,
        );
        return true;
      },
    );
  } finally {
    Deno.chdir(cwd);
  }
});
