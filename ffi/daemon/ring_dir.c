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
#include <stdlib.h>
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

/* Writes the names in `dir` that start with `prefix`, one per line, into
 * `out`; returns the bytes written, or -1 when the directory cannot be read.
 * The daemon finds ring directories of daemons that are gone with it. */
SW_EXPORT int64_t stompwatch_dir_names(const char *dir, const char *prefix, char *out, uint64_t cap) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  size_t plen = strlen(prefix);
  uint64_t used = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (n <= plen || strncmp(e->d_name, prefix, plen) != 0) continue;
    if (used + n + 1 > cap) break;
    memcpy(out + used, e->d_name, n);
    out[used + n] = '\n';
    used += n + 1;
  }
  closedir(d);
  return (int64_t)used;
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
