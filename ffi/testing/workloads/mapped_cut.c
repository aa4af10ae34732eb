/*
 * mapped_cut: ffi/mapped/mapped_log.c against a log cut shorter while it is
 * mapped, as its writer or a person may cut it.
 *
 *   mapped_cut DIR
 *     writes DIR/log (three pages and a bit), maps it, and:
 *     - reads it whole inside sw_mapped_run: prints `whole N` (N its bytes,
 *       and the zero after them);
 *     - cuts it to one page, reads its last byte inside sw_mapped_run
 *       again: prints `cut` when the run says the file got shorter;
 *     - cuts it further while a second mapping is read on another thread
 *       (its own run, its own answer): prints `thread cut`;
 *     then exits 0. Any other outcome prints what happened and exits 1; a
 *     SIGBUS the runs did not catch ends the process.
 *   mapped_cut DIR outside
 *     the same, then reads past the cut outside any run: the SIGBUS is
 *     not the runs' to catch, and ends the process as it would without
 *     them.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../mapped/mapped_log.c"

static volatile uint64_t sink;

struct read_job {
    const struct sw_mapped_log *m;
    uint64_t from, to;
};

static void read_range(void *arg) {
    struct read_job *j = arg;
    uint64_t sum = 0;
    for (uint64_t i = j->from; i < j->to; i++) sum += j->m->bytes[i];
    sink = sum;
}

struct on_thread {
    struct sw_mapped_log m;
    bool whole;
};

static void *read_on_thread(void *arg) {
    struct on_thread *t = arg;
    struct read_job j = {&t->m, 0, t->m.size};
    t->whole = sw_mapped_run(&t->m, read_range, &j);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) return 2;
    char path[4096];
    snprintf(path, sizeof path, "%s/log", argv[1]);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return 2;
    long page = sysconf(_SC_PAGESIZE);
    size_t size = 3 * (size_t)page + 100;
    char line[64];
    memset(line, 'x', sizeof line);
    line[63] = '\n';
    for (size_t at = 0; at < size; at += sizeof line)
        if (write(fd, line, size - at < sizeof line ? size - at : sizeof line) < 0) return 2;

    struct sw_mapped_log m;
    if (!sw_mapped_log_open(fd, 0, &m) || m.size != size) {
        printf("not mapped\n");
        return 1;
    }
    /* One byte past the end reads as 0 (the page of zeros). */
    struct read_job all = {&m, 0, size + 64};
    if (!sw_mapped_run(&m, read_range, &all) || m.bytes[size] != 0) {
        printf("whole read failed\n");
        return 1;
    }
    printf("whole %zu\n", size);
    if (ftruncate(fd, page) != 0) return 2;
    struct read_job last = {&m, size - 1, size};
    if (sw_mapped_run(&m, read_range, &last)) {
        printf("read past the cut without a word\n");
        return 1;
    }
    printf("cut\n");
    sw_mapped_log_close(&m);

    struct on_thread t;
    if (!sw_mapped_log_open(fd, 0, &t.m) || t.m.size != (uint64_t)page) return 2;
    if (ftruncate(fd, 0) != 0) return 2;
    pthread_t thread;
    if (pthread_create(&thread, NULL, read_on_thread, &t) != 0) return 2;
    pthread_join(thread, NULL);
    if (t.whole) {
        printf("thread read past the cut without a word\n");
        return 1;
    }
    printf("thread cut\n");
    if (argc == 3) {
        fflush(stdout);
        struct read_job past = {&t.m, 0, 1};
        read_range(&past);
        printf("read past the cut outside a run and lived\n");
        return 1;
    }
    sw_mapped_log_close(&t.m);
    close(fd);
    return 0;
}
