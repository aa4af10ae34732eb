/*
 * mapped_log.c: see mapped_log.h. The SIGBUS handler is installed on first
 * use and passes on every signal that is not a read of the mapping a
 * thread of ours is running over (Rust's stack-overflow report included).
 */
#define _GNU_SOURCE
#include "mapped_log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The run this thread is in: the bytes it reads, and whether a read of
 * them faulted. Initial-exec: the handler must not reach the loader (a
 * dlopened library's other thread-locals are found through it, which may
 * allocate) and it reads them only while some run is on. */
#define RUN_TLS __thread __attribute__((tls_model("initial-exec")))
static RUN_TLS const uint8_t *run_lo, *run_hi;
static RUN_TLS bool run_faulted;
static atomic_int runs_on;

static struct sigaction before;
static pthread_once_t installed = PTHREAD_ONCE_INIT;

/*
 * A fault on the running thread's own mapping (its file cut shorter) is
 * answered by putting zeros over the rest of the mapping and returning: the
 * read is made again and gets 0, the run reads zeros to its end and its
 * work is dropped. Not a jump out of the handler: returning restores all
 * the thread's state (a siglongjmp left Deno's thread with the protection
 * keys the kernel sets for a handler, and V8 then faulted on its own
 * memory).
 */
static void on_sigbus(int sig, siginfo_t *info, void *context) {
    const uint8_t *at = info->si_addr;
    if (atomic_load_explicit(&runs_on, memory_order_relaxed) > 0 && run_lo && at >= run_lo &&
        at < run_hi) {
        uintptr_t page = (uintptr_t)at & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
        if (mmap((void *)page, (size_t)((uintptr_t)run_hi - page), PROT_READ,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
            run_faulted = true;
            return;
        }
    }
    if (before.sa_flags & SA_SIGINFO) {
        before.sa_sigaction(sig, info, context);
    } else if (before.sa_handler == SIG_DFL || before.sa_handler == SIG_IGN) {
        /* As if never caught (a fault ignored would be made again
         * forever): the access is made again and ends the process. */
        signal(SIGBUS, SIG_DFL);
    } else {
        before.sa_handler(sig);
    }
}

static void install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &before);
}

/*
 * Pages are let go of in whole 2 MiB steps of the file, and the mapping
 * begins at one (the bytes before `from` are mapped, never read): the page
 * cache holds a log in folios of up to 2 MiB, and a release that ended
 * inside one left it mapped in part, counted whole. A pass that began
 * part way through a 1.26 GB log (check-leaks reading on from the rows it
 * kept) held 89 MB of it that way by its end; one from the start, none.
 */
#define RELEASE_STEP ((uint64_t)2 << 20)

bool sw_mapped_log_open(int fd, uint64_t from, struct sw_mapped_log *m) {
    memset(m, 0, sizeof *m);
    m->fd = fd;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    m->from = from;
    m->size = (uint64_t)st.st_size;
    if (from >= m->size) {
        m->size = from;
        return true;
    }
    uint64_t page_size = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t page = from & ~(RELEASE_STEP - 1);
    size_t file_len = (size_t)(m->size - page);
    /* A page of zeros after the file's last one (an anonymous mapping the
     * file is mapped over), so that a framer may read a block past the end:
     * past a file's last page a mapping has no readable byte. */
    m->len = (size_t)((file_len + 2 * page_size - 1) & ~(page_size - 1));
    m->map = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m->map == MAP_FAILED) {
        m->map = NULL;
        return false;
    }
    if (mmap(m->map, file_len, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, (off_t)page) == MAP_FAILED) {
        munmap(m->map, m->len);
        m->map = NULL;
        return false;
    }
    /* Read once, front to back: the kernel reads ahead and drops behind. */
    madvise(m->map, file_len, MADV_SEQUENTIAL);
    m->bytes = (const uint8_t *)m->map + (from - page);
    return true;
}

void sw_mapped_log_release(struct sw_mapped_log *m, uint64_t upto) {
    /* No further than the file: past the mapping, madvise would clear
     * whatever memory lies after it (rows_at.c asks for rows past the end
     * of a log cut since its offsets were read). */
    if (upto > m->size) upto = m->size;
    if (!m->map || upto <= m->from) return;
    size_t at = (size_t)(m->bytes - (const uint8_t *)m->map) + (size_t)(upto - m->from);
    at &= ~(size_t)(RELEASE_STEP - 1);
    if (at <= m->released) return;
    madvise((uint8_t *)m->map + m->released, at - m->released, MADV_DONTNEED);
    m->released = at;
}

void sw_mapped_log_close(struct sw_mapped_log *m) {
    if (m->map) munmap(m->map, m->len);
    memset(m, 0, sizeof *m);
}

/* How a run that read the mapping ended, by what the file is now. */
static enum sw_mapped_end end_of(const struct sw_mapped_log *m, bool faulted) {
    struct stat st;
    if (fstat(m->fd, &st) == 0 && (uint64_t)st.st_size < m->size) return SW_MAPPED_CUT;
    return faulted ? SW_MAPPED_FAILED : SW_MAPPED_WHOLE;
}

enum sw_mapped_end sw_mapped_run(const struct sw_mapped_log *m, void (*fn)(void *), void *arg) {
    pthread_once(&installed, install);
    /* A fault while SIGBUS is blocked ends the process whatever the
     * handler: it is let through for the run. */
    sigset_t bus, mask;
    sigemptyset(&bus);
    sigaddset(&bus, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &bus, &mask);
    const uint8_t *lo = run_lo, *hi = run_hi;
    bool faulted = run_faulted;
    run_lo = m->map;
    run_hi = (const uint8_t *)m->map + m->len;
    run_faulted = false;
    atomic_fetch_add(&runs_on, 1);
    fn(arg);
    atomic_fetch_sub(&runs_on, 1);
    enum sw_mapped_end end = end_of(m, run_faulted);
    run_lo = lo;
    run_hi = hi;
    run_faulted = faulted;
    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    return end;
}
