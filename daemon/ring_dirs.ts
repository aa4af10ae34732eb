/**
 * Ring directories: one per daemon, named after the daemon's pid and the
 * time that process started (`/dev/shm/stompwatch.{pid}.{start}.{tag}`, or
 * `OUT/rings.{pid}.{start}.{tag}` where there is no /dev/shm). A daemon that
 * is killed or crashes cannot remove its own, and each job's ring is 64 MiB
 * of shared memory, so every daemon and every `run` removes the directories
 * whose daemon is gone.
 *
 * Gone means its `.lock` is not held: a live daemon holds it (flock) for its
 * whole life, which holds across pid namespaces that share /dev/shm. Only a
 * directory without one (made by an older stompwatch) is judged by its name:
 * its pid is not alive, or now belongs to a process that started at another
 * time (pids are reused). /dev/shm is writable by every local user, so the
 * removal never follows a symlink and leaves anything not ours alone
 * (ffi/daemon/ring_dir.c).
 *
 * @module
 */
import {
  closeLock,
  listNames,
  makeLockedRingDir,
  pidAlive,
  pidStarted,
  reapRingDir,
  removeRingDir,
} from "../ffi/bindings.ts";

/**
 * Where ring directories go: `STOMPWATCH_SHM_DIR` when set (a container's
 * /dev/shm may be smaller than one 64 MiB ring; the tests keep theirs apart
 * from any daemon on the machine), else /dev/shm, memory that never reaches
 * a disk.
 *
 * @example
 * ```ts
 * import { ringRoot } from "./ring_dirs.ts";
 * ringRoot(); // "/dev/shm"
 * ```
 */
export function ringRoot(): string {
  return Deno.env.get("STOMPWATCH_SHM_DIR")?.replace(/(?<=.)\/+$/, "") ||
    "/dev/shm";
}
// Directories made before the start time was in the name have no `{start}.`.
const NAME = /^(?:stompwatch|rings)\.(\d+)\.(?:(\d+)\.)?[0-9a-f]{8}$/;

function tag(): string {
  return `${Deno.pid}.${pidStarted(Deno.pid)}.${
    crypto.randomUUID().slice(0, 8)
  }`;
}

/**
 * Makes this daemon's ring directory: in /dev/shm when there is one, so
 * rings never hit the disk, else under `outputDir`.
 *
 * @example
 * ```ts
 * makeRingDir("/tmp/out"); // "/dev/shm/stompwatch.4242.81234.1a2b3c4d"
 * ```
 */
export function makeRingDir(outputDir: string): string {
  const t = tag();
  const dirs = [`${ringRoot()}/stompwatch.${t}`, `${outputDir}/rings.${t}`];
  for (const dir of dirs) {
    const fd = makeLockedRingDir(dir);
    if (fd === null) continue;
    locks.set(dir, fd);
    return dir;
  }
  throw new Error(
    `Cannot create the ring directory: ${
      dirs[1]
    }; check that ${outputDir} is writable`,
  );
}

/** The lock fd of each ring directory this process made and still has. */
const locks = new Map<string, number>();

/**
 * Removes a ring directory this process made, and lets go of its lock.
 *
 * @example
 * ```ts
 * removeOwnRingDir(makeRingDir("/tmp/out"));
 * ```
 */
export function removeOwnRingDir(dir: string): void {
  removeRingDir(dir);
  const fd = locks.get(dir);
  if (fd === undefined) return;
  locks.delete(dir);
  closeLock(fd);
}

/**
 * Whether the daemon that made the ring directory named `name` is gone, by
 * the pid and start time in the name alone: the verdict for a directory
 * without a `.lock`.
 *
 * @example
 * ```ts
 * ringDirOrphaned("stompwatch.999999.1.1a2b3c4d"); // true: no such pid
 * ```
 */
export function ringDirOrphaned(name: string): boolean {
  const m = NAME.exec(name);
  if (!m) return false;
  const pid = Number(m[1]);
  if (!pidAlive(pid)) return true;
  if (m[2] === undefined) return false; // an older name: the pid is all we know
  const started = pidStarted(pid);
  return started !== 0n && started !== BigInt(m[2]);
}

/**
 * Removes the ring directories of daemons that are gone, in /dev/shm and
 * under `outputDir`; returns their paths.
 *
 * @example
 * ```ts
 * removeOrphanedRingDirs("/tmp/out"); // ["/dev/shm/stompwatch.4242.81234.1a2b3c4d"]
 * ```
 */
export function removeOrphanedRingDirs(outputDir?: string): string[] {
  const removed: string[] = [];
  const places: Array<[string, string]> = [[ringRoot(), "stompwatch."]];
  if (outputDir) places.push([outputDir, "rings."]);
  for (const [dir, prefix] of places) {
    for (const name of listNames(dir, prefix) ?? []) {
      if (!NAME.test(name)) continue;
      if (reapRingDir(`${dir}/${name}`, ringDirOrphaned(name))) {
        removed.push(`${dir}/${name}`);
      }
    }
  }
  return removed;
}
