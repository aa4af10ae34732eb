/*
 * pages.h: what the analyses ask of the kernel about the pages of their
 * large arrays, rounded inward to whole pages (an array need not start or
 * end on one).
 */
#ifndef STOMPWATCH_PAGES_H
#define STOMPWATCH_PAGES_H

#include <stddef.h>

/*
 * Asks for huge pages under [p, p + bytes), an array about to be filled
 * once: on the 2-vCPU VMs of 2026-11-26 a 4 KiB page cost about 3.5 us to
 * fault in and give back, and 120 MB took 103 ms to fill and 17 ms to
 * unmap in 4 KiB pages, 16-17 ms and 0.5 ms in huge pages. Where memory
 * is fragmented the kernel may compact first (defrag "madvise": slower,
 * 198 ms once) or fall back to small pages.
 */
void sw_pages_prefer_huge(void *p, size_t bytes);

/* Zeroed memory of its own mapping, huge pages asked for (a table or
 * pool about to be filled); NULL when memory is short. Not from malloc: a
 * streaming replay that ends early hands over to passes that need memory
 * too, and malloc keeps what is freed (tens of MB, on a thread's arena) in
 * the process, which then peaked 80 MB higher. */
void *sw_pages_new(size_t bytes);
/* Gives back what sw_pages_new made (NULL: nothing). */
void sw_pages_free(void *p, size_t bytes);

/* Hands the whole pages of [p, p + bytes) back to the system: they read
 * as zeros after. */
void sw_pages_forget(void *p, size_t bytes);

#endif
