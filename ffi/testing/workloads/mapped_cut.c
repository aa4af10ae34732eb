/*
 * mapped_cut: ffi/reading/mapped_log.c against a log cut shorter while it is
 * mapped, as its writer or a person may cut it.
 *
 *   mapped_cut DIR
 *     writes DIR/log (three pages), maps it, and prints a line for each
 *     run that ends as it should:
 *     - `whole N`: read whole, and 64 bytes past its end, which read as 0;
 *     - `cut in page`: cut by 100 bytes (its last page still there) while
 *       a run reads it: the run says the file got shorter;
 *     - `cut`: cut to one page, its last byte read in a run: the fault is
 *       caught and the run says so;
 *     - `thread cut`: the same on a thread of its own;
 *     then exits 0. Any other outcome prints what happened and exits 1.
 *   mapped_cut DIR outside
 *     reads past a cut outside any run.
 *   mapped_cut DIR other-mapping
 *     reads past the cut of one mapping inside a run over another.
 *   mapped_cut DIR other-thread
 *     reads past a cut outside a run while another thread runs over the
 *     same mapping.
 *   Each of the last three ends with the SIGBUS, as it would without the
 *   runs: a fault is a run's to catch only on its own thread and mapping.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../reading/mapped_log.c"

static volatile uint64_t sink;
static size_t page;

struct read_job {
    const struct sw_mapped_log *m;
    uint64_t from, to;
    void (*then)(void);
};

static void read_range(void *arg) {
    struct read_job *j = arg;
    uint64_t sum = 0;
    for (uint64_t i = j->from; i < j->to; i++) sum += j->m->bytes[i];
    sink = sum;
    if (j->then) j->then();
}

/* A log of `pages` pages of text at DIR/name, opened for reading and
 * cutting. */
static int log_file(const char *dir, const char *name, size_t pages) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    char line[64];
    memset(line, 'x', sizeof line);
    line[63] = '\n';
    for (size_t at = 0; fd >= 0 && at < pages * page; at += sizeof line)
        if (write(fd, line, sizeof line) != sizeof line) return -1;
    return fd;
}

static void must_map(int fd, struct sw_mapped_log *m) {
    if (!sw_mapped_log_open(fd, 0, m)) {
        printf("not mapped\n");
        _exit(1);
    }
}

static void cut(int fd, off_t size) {
    if (ftruncate(fd, size) != 0) _exit(2);
}

struct on_thread {
    struct sw_mapped_log *m;
    enum sw_mapped_end end;
    void (*then)(void);
};

static void *run_on_thread(void *arg) {
    struct on_thread *t = arg;
    struct read_job j = {t->m, 0, t->m->size, t->then};
    t->end = sw_mapped_run(t->m, read_range, &j);
    return NULL;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int in_run;

/* Says it is in its run, then waits there for good. */
static void stay_in_run(void) {
    pthread_mutex_lock(&lock);
    in_run = 1;
    pthread_cond_broadcast(&cond);
    for (;;) pthread_cond_wait(&cond, &lock);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    page = (size_t)sysconf(_SC_PAGESIZE);
    const char *mode = argc > 2 ? argv[2] : "";
    int fd = log_file(argv[1], "log", 3);
    if (fd < 0) return 2;
    struct sw_mapped_log m;
    must_map(fd, &m);
    uint64_t size = m.size;

    if (strcmp(mode, "outside") == 0) {
        cut(fd, 0);
        struct read_job past = {&m, 0, 1, NULL};
        read_range(&past);
    } else if (strcmp(mode, "other-mapping") == 0) {
        int other = log_file(argv[1], "other", 1);
        struct sw_mapped_log b;
        must_map(other, &b);
        cut(other, 0);
        struct read_job past = {&b, 0, 1, NULL};
        sw_mapped_run(&m, read_range, &past);
    } else if (strcmp(mode, "other-thread") == 0) {
        cut(fd, 0);
        struct on_thread t = {&m, SW_MAPPED_WHOLE, stay_in_run};
        /* The thread's run reads nothing before it waits. */
        m.size = 0;
        pthread_t thread;
        if (pthread_create(&thread, NULL, run_on_thread, &t) != 0) return 2;
        pthread_mutex_lock(&lock);
        while (!in_run) pthread_cond_wait(&cond, &lock);
        pthread_mutex_unlock(&lock);
        struct read_job past = {&m, 0, 1, NULL};
        read_range(&past);
    } else {
        struct read_job all = {&m, 0, size + 64, NULL};
        if (sw_mapped_run(&m, read_range, &all) != SW_MAPPED_WHOLE || sink != 'x' * (size / 64) * 63 + '\n' * (size / 64)) {
            printf("whole read failed\n");
            return 1;
        }
        printf("whole %llu\n", (unsigned long long)size);
        cut(fd, (off_t)size - 100);
        struct read_job in_page = {&m, 0, size, NULL};
        if (sw_mapped_run(&m, read_range, &in_page) != SW_MAPPED_CUT) {
            printf("read a cut in the last page without a word\n");
            return 1;
        }
        printf("cut in page\n");
        cut(fd, (off_t)page);
        struct read_job last = {&m, size - 1, size, NULL};
        if (sw_mapped_run(&m, read_range, &last) != SW_MAPPED_CUT) {
            printf("read past the cut without a word\n");
            return 1;
        }
        printf("cut\n");
        sw_mapped_log_close(&m);
        must_map(fd, &m);
        cut(fd, 0);
        struct on_thread t = {&m, SW_MAPPED_WHOLE, NULL};
        pthread_t thread;
        if (pthread_create(&thread, NULL, run_on_thread, &t) != 0) return 2;
        pthread_join(thread, NULL);
        if (t.end != SW_MAPPED_CUT) {
            printf("thread read past the cut without a word\n");
            return 1;
        }
        printf("thread cut\n");
        return 0;
    }
    printf("read past a cut outside its own run and lived\n");
    return 1;
}
