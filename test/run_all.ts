/**
 * `deno task test`: every test, with a temporary directory of the run's
 * own (TMPDIR, which Deno's and Python's temporary files follow), removed
 * when the run ends, passed or failed or interrupted. The tests make a few
 * thousand temporary files and directories, close to 2 GB in all; left in
 * /tmp, a few runs filled the disk of a 2-vCPU machine. Arguments go to
 * `deno test` (a file, `--filter NAME`).
 *
 * @module
 */
const PERMISSIONS = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-run",
  "--allow-ffi",
  "--allow-net",
  "--allow-sys",
];
/** The rings the tests' jobs make, kept apart from a daemon's. */
const SHM_DIR = "/dev/shm/stompwatch-tests";

Deno.mkdirSync(SHM_DIR, { recursive: true });
const tmp = Deno.makeTempDirSync({ prefix: "stompwatch-tests." });
const child = new Deno.Command(Deno.execPath(), {
  args: [
    "test",
    ...PERMISSIONS,
    ...(Deno.args.length > 0 ? Deno.args : ["test/"]),
  ],
  env: { TMPDIR: tmp, STOMPWATCH_SHM_DIR: SHM_DIR },
}).spawn();
// Ctrl-C reaches the tests too (one process group); a SIGTERM sent to this
// process alone is passed on. Either way, wait for them, then clean up.
Deno.addSignalListener("SIGINT", () => {});
Deno.addSignalListener("SIGTERM", () => child.kill("SIGTERM"));
const { code } = await child.status;
try {
  Deno.removeSync(tmp, { recursive: true });
} catch (e) {
  console.error(`Cannot remove the tests' files in ${tmp}: ${e}`);
}
Deno.exit(code);
