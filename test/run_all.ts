/**
 * `deno task test`: every test, with a temporary directory of the run's
 * own (TMPDIR, which Deno's and Python's temporary files follow), removed
 * when the run ends, passed or failed or interrupted. A run of the tests
 * made over 500 temporary directories, 1.8 GB in all; left in /tmp, runs
 * over several sessions filled the disk of a 2-vCPU machine. Arguments go to
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

/**
 * A new directory under $TMPDIR (or /tmp), named short: the tests' Unix
 * sockets live a few directories down, and a socket path has 107 bytes.
 */
function runDirectory(): string {
  const base = (Deno.env.get("TMPDIR") || "/tmp").replace(/\/+$/, "");
  for (let n = 0;; n++) {
    const dir = `${base}/swt${Deno.pid}${n ? `.${n}` : ""}`;
    try {
      Deno.mkdirSync(dir, { mode: 0o700 });
      return dir;
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    }
  }
}

/** What the tests leave mounted under `dir` (the I/O error tests' tmpfs). */
function mountsUnder(dir: string): string[] {
  try {
    return Deno.readTextFileSync("/proc/self/mountinfo").split("\n")
      .map((line) => line.split(" ")[4] ?? "")
      .filter((point) => point.startsWith(`${dir}/`));
  } catch {
    return [];
  }
}

/** Removes the run's directory; false, having said why, when it cannot. */
async function removeRunDirectory(dir: string): Promise<boolean> {
  for (const point of mountsUnder(dir).reverse()) {
    await new Deno.Command("umount", { args: ["-l", point], stderr: "null" })
      .output().catch(() => undefined);
  }
  for (let attempt = 1;; attempt++) {
    try {
      Deno.removeSync(dir, { recursive: true });
      return true;
    } catch (e) {
      if (attempt === 5) {
        console.error(
          `Cannot remove the tests' files in ${dir}: ${(e as Error).message}`,
        );
        return false;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Whether an argument names a file or directory (a filter's name does not). */
function isPath(arg: string): boolean {
  try {
    Deno.statSync(arg);
    return true;
  } catch {
    return false;
  }
}

const paths = Deno.args.filter((a) => !a.startsWith("-") && isPath(a));
Deno.mkdirSync(SHM_DIR, { recursive: true });
const tmp = runDirectory();
// In a process group of their own, so that whatever the tests leave running
// (a daemon a test stopped with SIGSTOP, when the test was interrupted) is
// ended before the directory is removed and cannot write into it again.
// Signals are heard from before the tests start; the group is theirs once
// they have.
const group = { pid: 0 };
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  Deno.addSignalListener(signal, () => {
    try {
      if (group.pid) Deno.kill(-group.pid, signal);
    } catch { /* they ended already */ }
  });
}
const tests = new Deno.Command(Deno.execPath(), {
  args: [
    "test",
    ...PERMISSIONS,
    ...Deno.args,
    ...(paths.length ? [] : ["test/"]),
  ],
  env: { TMPDIR: tmp, STOMPWATCH_SHM_DIR: SHM_DIR },
  detached: true,
}).spawn();
group.pid = tests.pid;
const { code } = await tests.status;
try {
  Deno.kill(-group.pid, "SIGKILL");
} catch { /* nothing of theirs is left */ }
const removed = await removeRunDirectory(tmp);
Deno.exit(code === 0 && !removed ? 1 : code);
