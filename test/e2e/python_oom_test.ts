/**
 * OOM snapshots of a PyTorch job: an out-of-memory error in an Aten op,
 * seen by the hook at PyTorch's CPU allocator or recognised by the Python
 * client, makes the daemon write the files OOM_SNAPSHOT_ENABLE asks for.
 *
 * @module
 */
import assert from "node:assert/strict";
import { checkSnapshots } from "../analysis/snapshot/_check.ts";
import { tempDir } from "./_harness.ts";
import { OOM_ON_DEVICE, runPython } from "./_python.ts";

for (
  const [how, extra, kept] of [
    ["seen by the hook at the CPU allocator", [], 3],
    // Storages recorded by the client, which reports the failure after
    // the rows it holds.
    ["recognised by the client (call stacks asked)", [
      "--call-stack",
      "python:1",
    ], 3],
    // Recording off: nothing is live in the snapshot but the failure.
    ["recognised by the client (recording off)", ["--events", "access"], 0],
  ] as const
) {
  Deno.test(`an out-of-memory error in a PyTorch op, ${how}, gets OOM snapshots in both modes while the job goes on`, async () => {
    for (const mode of ["1", "2"]) {
      const snaps = tempDir();
      const r = await runPython("oom.py", [...extra], {
        OOM_SNAPSHOT_ENABLE: mode,
        OOM_SNAPSHOT_PATH: snaps,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^oom: /m);
      assert.match(r.stdout, OOM_ON_DEVICE.error);
      assert.match(r.stdout, /^after the oom 3000$/m);
      const files = [...Deno.readDirSync(snaps)].map((e) => e.name).sort();
      assert.equal(files.length, 2, files.join(" "));
      const [csv, pickle] = files;
      assert.match(
        csv,
        new RegExp(
          `^device_${OOM_ON_DEVICE.device}_memUsageInfo_\\d{14}\\.csv$`,
        ),
      );
      assert.match(pickle, /^oom_snapshot_\d+_\d{14}\.pickle$/);
      assert.match(
        r.stderr,
        new RegExp(
          `out of memory on device ${OOM_ON_DEVICE.device} in pid \\d+: wrote `,
        ),
      );
      // The kept tensors of 4000 bytes, live at the failure.
      assert.equal(
        Deno.readTextFileSync(`${snaps}/${csv}`),
        "moduleName,curMemSize(MB),memPeakSize(MB)\n" +
          (kept ? `${OOM_ON_DEVICE.pool},0.0114,0.0114\n` : ""),
      );
      const [c] = await checkSnapshots([`${snaps}/${pickle}`]);
      assert.ok(c.ok, c.error);
      assert.equal(c.allocated, kept * 4000);
      if (mode === "2") {
        // The state only: no history.
        assert.ok(c.trace_entries.every((n) => n === 0), `${c.trace_entries}`);
        continue;
      }
      const last = JSON.parse(
        new TextDecoder().decode(
          (await new Deno.Command("python3", {
            args: [
              "-c",
              "import pickle,json,sys;t=pickle.load(open(sys.argv[1],'rb'))['device_traces'];print(json.dumps([e for d in t for e in d][-1]))",
              `${snaps}/${pickle}`,
            ],
            stdout: "piped",
          }).output()).stdout,
        ),
      );
      assert.equal(last.action, "oom");
      assert.equal(last.size, 2 ** 50);
    }
  });
}

Deno.test("a script that never imports stompwatch is traced under run: its OOM gets snapshots, and a sitecustomize of its own still runs", async () => {
  const snaps = tempDir(), site = tempDir();
  Deno.writeTextFileSync(
    `${site}/sitecustomize.py`,
    'print("the job\'s own sitecustomize ran")\n',
  );
  const r = await runPython("plain_oom.py", [], {
    OOM_SNAPSHOT_ENABLE: "1",
    OOM_SNAPSHOT_PATH: snaps,
    PYTHONPATH: site,
  });
  assert.equal(r.code, 1, r.stderr); // the job's own error, uncaught
  assert.match(r.stderr, /Error: /);
  assert.match(r.stderr, OOM_ON_DEVICE.error);
  assert.match(r.stdout, /^the job's own sitecustomize ran$/m);
  const files = [...Deno.readDirSync(snaps)].map((e) => e.name).sort();
  assert.equal(files.length, 2, files.join(" "));
  assert.equal(
    Deno.readTextFileSync(`${snaps}/${files[0]}`),
    `moduleName,curMemSize(MB),memPeakSize(MB)\n${OOM_ON_DEVICE.pool},0.0114,0.0114\n`,
  );
});
