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
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <string.h>
#include <unistd.h>

#include "sw_common.h"

/* Filesystems of the kernel's own files: sizes of 0 or 4096, contents made on
 * read, some (/proc/self/mem) failing every read. Never an event log. */
#define PROC_SUPER_MAGIC 0x9fa0
#define SYSFS_MAGIC 0x62656572

/* Returns an fd, or -errno; STOMPWATCH_LOG_NOT_FILE (-100000) for a directory,
 * FIFO, socket or device, STOMPWATCH_LOG_SYSTEM (-100001) for a file of /proc
 * or /sys. Links are followed. */
SW_EXPORT int stompwatch_log_open(const char *path) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -errno;
  struct stat st;
  struct statfs fs;
  int why = 0;
  if (fstat(fd, &st) != 0) {
    why = -errno;
  } else if (!S_ISREG(st.st_mode)) {
    why = -100000;
  } else if (fstatfs(fd, &fs) == 0 && (fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC)) {
    why = -100001;
  }
  if (why != 0) {
    close(fd);
    return why;
  }
  return fd;
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
