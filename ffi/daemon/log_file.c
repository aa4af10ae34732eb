/*
 * log_file.c: opening an event log a person named, for the analyses. Deno's
 * own open has no O_NONBLOCK, so a FIFO put where a log was expected would
 * hold the open until some writer came; here the open never waits, and what
 * was opened is checked by its descriptor (no moment between a check by path
 * and the open). Reads are positional, so every pass of an analysis reads the
 * one file that was checked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <string.h>
#include <unistd.h>

#include "sw_common.h"

/* What stompwatch_log_open answers besides -errno (ffi/bindings.ts). */
#define STOMPWATCH_LOG_NOT_FILE (-100000)
#define STOMPWATCH_LOG_SYSTEM (-100001)

/* Filesystems of the kernel's own files (proc, sysfs, debugfs, tracefs,
 * cgroup 1 and 2, securityfs, pstore, bpf, configfs, efivarfs): sizes of 0
 * or 4096, contents made on read, some (/proc/self/mem) failing every
 * read. Never an event log. */
static bool system_fs(int64_t type) {
  static const int64_t kinds[] = {0x9fa0,     0x62656572, 0x64626720, 0x74726163, 0x27e0eb, 0x63677270,
                                  0x73636673, 0x6165676c, 0xcafe4a11, 0x62656570, 0xde5e81e4};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (type == kinds[i]) return true;
  return false;
}

/* Returns an fd, or -errno; STOMPWATCH_LOG_NOT_FILE for a directory, FIFO,
 * socket or device, STOMPWATCH_LOG_SYSTEM for a file of the kernel's own
 * filesystems. Links are followed. What the path names is looked at through
 * an O_PATH descriptor first, which opens nothing: a device's driver never
 * sees an open, a FIFO never waits. The regular file is then opened through
 * that descriptor, so the file checked is the file read. */
SW_EXPORT int stompwatch_log_open(const char *path) {
  int at = open(path, O_PATH | O_CLOEXEC);
  if (at < 0) return -errno;
  struct stat st, again;
  struct statfs fs;
  int why = 0;
  if (fstat(at, &st) != 0) {
    why = -errno;
  } else if (!S_ISREG(st.st_mode)) {
    why = STOMPWATCH_LOG_NOT_FILE;
  } else if (fstatfs(at, &fs) == 0 && system_fs((int64_t)fs.f_type)) {
    why = STOMPWATCH_LOG_SYSTEM;
  }
  if (why != 0) {
    close(at);
    return why;
  }
  char self[64];
  snprintf(self, sizeof self, "/proc/self/fd/%d", at);
  int fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  /* Without /proc, by the path again, then held to the same file. */
  if (fd < 0 && errno == ENOENT) fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    why = -errno;
  } else if (fstat(fd, &again) != 0 || again.st_dev != st.st_dev || again.st_ino != st.st_ino) {
    why = STOMPWATCH_LOG_NOT_FILE;
    close(fd);
  }
  close(at);
  return why != 0 ? why : fd;
}

/* Reads up to `len` bytes at `offset`; the count (0 at the end), or -errno. */
SW_EXPORT int64_t stompwatch_log_pread(int fd, void *buf, uint64_t len, uint64_t offset) {
  for (;;) {
    ssize_t n = pread(fd, buf, len, (off_t)offset);
    if (n >= 0) return n;
    if (errno != EINTR) return -errno;
  }
}

/* The file's size now, or -errno. */
SW_EXPORT int64_t stompwatch_log_size(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 ? (int64_t)st.st_size : -errno;
}

/* The system's text for `err` into `out` (NUL-terminated); its length. */
SW_EXPORT uint32_t stompwatch_strerror(int err, char *out, uint32_t cap) {
  if (cap == 0) return 0;
  const char *s = strerror_r(err, out, cap);
  if (s != out) {
    uint32_t i = 0;
    for (; s[i] && i + 1 < cap; i++) out[i] = s[i];
    out[i] = '\0';
  }
  uint32_t n = 0;
  while (n < cap && out[n]) n++;
  return n;
}
