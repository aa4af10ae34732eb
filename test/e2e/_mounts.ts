/**
 * Real file system faults for the end-to-end tests: a tmpfs mounted over a
 * directory the daemon writes, read-only or tiny, and remounted later. Needs
 * root (CI runs as root); {@linkcode MOUNT_SKIP} says why tests are skipped
 * where mounting is not possible.
 *
 * @module
 */

function mountCommand(args: string[]): { ok: boolean; error: string } {
  try {
    const out = new Deno.Command(args[0], {
      args: args.slice(1),
      stdout: "null",
      stderr: "piped",
    }).outputSync();
    return { ok: out.success, error: new TextDecoder().decode(out.stderr) };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

function probe(): string | undefined {
  if (Deno.uid() !== 0) return "mounting a tmpfs needs root";
  const dir = Deno.makeTempDirSync({ prefix: "stompwatch_mount_probe_" });
  try {
    const m = mountCommand([
      "mount",
      "-t",
      "tmpfs",
      "-o",
      "size=64k",
      "tmpfs",
      dir,
    ]);
    if (!m.ok) return `mount -t tmpfs failed: ${m.error.trim()}`;
    mountCommand(["umount", dir]);
    return undefined;
  } finally {
    Deno.removeSync(dir);
  }
}

/** Why the mount tests are skipped here, or undefined when they can run. */
export const MOUNT_SKIP = probe();
if (MOUNT_SKIP) {
  console.error(`skipping file system fault tests: ${MOUNT_SKIP}`);
}

/** Mounts a tmpfs over `dir` with `options` (e.g. `ro,size=1m`). */
export function mountTmpfs(dir: string, options: string): void {
  const m = mountCommand(["mount", "-t", "tmpfs", "-o", options, "tmpfs", dir]);
  if (!m.ok) throw new Error(`Cannot mount a tmpfs on ${dir}: ${m.error}`);
}

/** Changes the options of the tmpfs on `dir` (e.g. `rw`, `size=64m`). */
export function remount(dir: string, options: string): void {
  const m = mountCommand(["mount", "-o", `remount,${options}`, dir]);
  if (!m.ok) throw new Error(`Cannot remount ${dir}: ${m.error}`);
}

/** Unmounts `dir`, lazily, so a file still open there does not keep it. */
export function unmount(dir: string): void {
  mountCommand(["umount", "-l", dir]);
}
