/*
 * ring_dir.c: the daemon's few filesystem and process calls that Deno's
 * permission model will not make without --allow-all (anything under /dev or
 * /proc): the ring directory lives in /dev/shm so rings never reach a disk.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sw_common.h"

/* Creates `path` with mode 0700; 0 on success, else errno. */
SW_EXPORT int stompwatch_dir_make(const char *path) {
  if (mkdir(path, 0700) != 0) return errno;
  return chmod(path, 0700) == 0 ? 0 : errno;
}

/* Writes the names in `dir` that start with `prefix` and end with `suffix`
 * (with something between), one per line, into `out`; returns the bytes
 * written, or -1 when the directory cannot be read. Hidden names never
 * match an empty prefix: they are part files. */
static int64_t list_names(const char *dir, const char *prefix, const char *suffix, char *out, uint64_t cap) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  size_t plen = strlen(prefix), slen = strlen(suffix);
  uint64_t used = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (n <= plen + slen || (plen == 0 && e->d_name[0] == '.')) continue;
    if (strncmp(e->d_name, prefix, plen) != 0 || strcmp(e->d_name + n - slen, suffix) != 0) continue;
    if (used + n + 1 > cap) break;
    memcpy(out + used, e->d_name, n);
    out[used + n] = '\n';
    used += n + 1;
  }
  closedir(d);
  return (int64_t)used;
}

/* Writes the names of ready rings (`{pid}.ring`) in `dir`, one per line,
 * into `out`; returns the bytes written, or -1 when the directory is gone. */
SW_EXPORT int64_t stompwatch_dir_rings(const char *dir, char *out, uint64_t cap) {
  return list_names(dir, "", ".ring", out, cap);
}

/* Removes a file, then (with a NULL file) nothing else: 0 or errno. */
SW_EXPORT int stompwatch_file_remove(const char *path) { return unlink(path) == 0 ? 0 : errno; }

/*
 * Ring directories are removed by name, by processes other than the one
 * that made them (a daemon that was killed cannot), in places every local
 * user can write (/dev/shm). So nothing here follows a name blindly: the
 * directory is opened relative to its parent without following a symlink,
 * must be ours and writable by no one else, only regular files in it are
 * removed (a symlink or a subdirectory stops the removal), and there is no
 * recursion. A live daemon holds flock(LOCK_EX) on `.lock` inside its own
 * directory for its whole life: a pid says nothing across pid namespaces
 * that share /dev/shm, a held lock does.
 */
#define LOCK_NAME ".lock"

/* Opens the parent of `path` and points `*name` at its last part: the
 * parent's fd, or -1 with errno set. */
static int open_parent(const char *path, const char **name) {
  const char *slash = strrchr(path, '/');
  char parent[PATH_MAX];
  if (!slash || slash[1] == '\0' || (size_t)(slash - path) >= sizeof parent) {
    errno = EINVAL;
    return -1;
  }
  size_t n = slash == path ? 1 : (size_t)(slash - path);
  memcpy(parent, path, n);
  parent[n] = '\0';
  *name = slash + 1;
  return open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* Opens ring directory `name` under `parent` if it is a real directory (not
 * a symlink), owned by this user and writable by no one else: its fd, or -1
 * with errno set (ELOOP or ENOTDIR for a symlink, EPERM for someone else's). */
static int open_own_dir(int parent, const char *name) {
  int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
    close(fd);
    errno = EPERM;
    return -1;
  }
  return fd;
}

/* Removes the regular files in `dir` (an fd it keeps), then `name` from
 * `parent`: 0 or errno (ENOTEMPTY when anything else was in it). */
static int empty_and_remove(int parent, int dir, const char *name) {
  int dup_fd = dup(dir);
  DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
  if (!d) {
    int err = errno;
    if (dup_fd >= 0) close(dup_fd);
    return err;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    struct stat st;
    if (fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) unlinkat(dir, e->d_name, 0);
  }
  closedir(d);
  return unlinkat(parent, name, AT_REMOVEDIR) == 0 ? 0 : errno;
}

/* Makes ring directory `path` (0700) with `.lock` in it, held with
 * flock(LOCK_EX) through the returned fd (close-on-exec: jobs do not
 * inherit it) for as long as the caller lives or until it closes it; -errno
 * on failure. Made under a hidden name and renamed, so that the name the
 * cleaner looks for never exists without its lock held. */
SW_EXPORT int stompwatch_ring_dir_make(const char *path) {
  const char *name;
  int parent = open_parent(path, &name);
  if (parent < 0) return -errno;
  char part[NAME_MAX + 1];
  if (snprintf(part, sizeof part, ".%s.part", name) >= (int)sizeof part) {
    close(parent);
    return -ENAMETOOLONG;
  }
  int err = 0, dir = -1, lock = -1;
  if (mkdirat(parent, part, 0700) != 0) {
    err = errno;
    close(parent);
    return -err;
  }
  if ((dir = open_own_dir(parent, part)) < 0 || fchmod(dir, 0700) != 0) err = errno;
  if (!err && (lock = openat(dir, LOCK_NAME, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0) err = errno;
  if (!err && flock(lock, LOCK_EX | LOCK_NB) != 0) err = errno;
  if (!err && renameat2(parent, part, parent, name, RENAME_NOREPLACE) != 0) {
    /* A filesystem without RENAME_NOREPLACE: the name holds a random tag. */
    if (errno != EINVAL || renameat(parent, part, parent, name) != 0) err = errno;
  }
  if (err) {
    if (lock >= 0) close(lock);
    if (dir >= 0) {
      empty_and_remove(parent, dir, part);
      close(dir);
    } else {
      unlinkat(parent, part, AT_REMOVEDIR);
    }
    close(parent);
    return -err;
  }
  close(dir);
  close(parent);
  return lock;
}

/* Closes an fd from stompwatch_ring_dir_make (its lock goes with it). */
SW_EXPORT int stompwatch_fd_close(int32_t fd) { return close(fd) == 0 ? 0 : errno; }

/* Removes the caller's own ring directory `dir` and the regular files in it
 * (rings, leftovers of killed jobs): 0 or errno. */
SW_EXPORT int stompwatch_dir_remove(const char *dir) {
  const char *name;
  int parent = open_parent(dir, &name);
  if (parent < 0) return errno;
  int fd = open_own_dir(parent, name);
  int err = fd < 0 ? errno : empty_and_remove(parent, fd, name);
  if (fd >= 0) close(fd);
  close(parent);
  return err;
}

/* Removes ring directory `dir` of a daemon that is gone, with the same care
 * as stompwatch_dir_remove: gone when its `.lock` is not held, or, for a
 * directory without one (made before there were locks), when `pid_gone`
 * (the caller's verdict from the pid and start time in the name). 0 when
 * removed; EBUSY when its daemon lives; EPERM when it is not ours; ELOOP or
 * ENOTDIR for a symlink; else errno. */
SW_EXPORT int stompwatch_ring_dir_reap(const char *dir, int32_t pid_gone) {
  const char *name;
  int parent = open_parent(dir, &name);
  if (parent < 0) return errno;
  int fd = open_own_dir(parent, name), err = 0, lock = -1;
  if (fd < 0) {
    err = errno;
  } else if ((lock = openat(fd, LOCK_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) >= 0) {
    struct stat st;
    if (fstat(lock, &st) != 0 || !S_ISREG(st.st_mode)) err = EPERM;
    else if (flock(lock, LOCK_EX | LOCK_NB) != 0) err = errno == EWOULDBLOCK ? EBUSY : errno;
  } else if (errno != ENOENT) {
    err = errno;
  } else if (!pid_gone) {
    err = EBUSY;
  }
  /* Removed while holding the lock: no second cleaner races this one. */
  if (!err) err = empty_and_remove(parent, fd, name);
  if (lock >= 0) close(lock);
  if (fd >= 0) close(fd);
  close(parent);
  return err;
}

/* Whether process `pid` still exists (it may belong to someone else). */
SW_EXPORT int stompwatch_pid_alive(int32_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

/* Writes the names in `dir` that start with `prefix`, one per line, into
 * `out`; returns the bytes written, or -1 when the directory cannot be read.
 * The daemon finds ring directories of daemons that are gone with it. */
SW_EXPORT int64_t stompwatch_dir_names(const char *dir, const char *prefix, char *out, uint64_t cap) {
  return list_names(dir, prefix, "", out, cap);
}

/* When process `pid` started, in clock ticks since boot (field 22 of
 * /proc/PID/stat); 0 when it does not exist. A pid names a process only
 * together with its start time: pids are reused. */
SW_EXPORT uint64_t stompwatch_pid_started(int32_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "re");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  /* The command (field 2) may hold spaces and parentheses: count from the last ')'. */
  char *p = strrchr(buf, ')');
  if (!p) return 0;
  unsigned long long start = 0;
  int field = 2;
  char *save = NULL;
  for (char *tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    if (++field == 22) {
      start = strtoull(tok, NULL, 10);
      break;
    }
  }
  return start;
}
