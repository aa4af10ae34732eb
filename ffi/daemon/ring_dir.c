/*
 * ring_dir.c: the daemon's few filesystem and process calls that Deno's
 * permission model will not make without --allow-all (anything under /dev or
 * /proc): the ring directory lives in /dev/shm so rings never reach a disk.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sw_common.h"

/* Creates `path` with mode 0700; 0 on success, else errno. */
SW_EXPORT int stompwatch_dir_make(const char *path) {
  if (mkdir(path, 0700) != 0) return errno;
  return chmod(path, 0700) == 0 ? 0 : errno;
}

/* Writes the names of ready rings (`{pid}.ring`) in `dir`, one per line,
 * into `out`; returns the bytes written, or -1 when the directory is gone. */
SW_EXPORT int64_t stompwatch_dir_rings(const char *dir, char *out, uint64_t cap) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  uint64_t used = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (n < 6 || e->d_name[0] == '.' || strcmp(e->d_name + n - 5, ".ring") != 0) continue;
    if (used + n + 1 > cap) break;
    memcpy(out + used, e->d_name, n);
    out[used + n] = '\n';
    used += n + 1;
  }
  closedir(d);
  return (int64_t)used;
}

/* Removes a file, then (with a NULL file) nothing else: 0 or errno. */
SW_EXPORT int stompwatch_file_remove(const char *path) { return unlink(path) == 0 ? 0 : errno; }

/* Removes `dir` and the files in it (rings, leftovers of killed jobs). */
SW_EXPORT int stompwatch_dir_remove(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return errno;
  struct dirent *e;
  char path[4096];
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  closedir(d);
  return rmdir(dir) == 0 ? 0 : errno;
}

/* Whether process `pid` still exists (it may belong to someone else). */
SW_EXPORT int stompwatch_pid_alive(int32_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }
