/*
 * convert.c: an event log to a memory_viz snapshot, the one entry point
 * Deno calls (ffi/bindings.ts). The steps are analysis/snapshot/convert.ts's:
 * memory rows read once, put in time order, given a device where a FREE
 * row says N/A (resolveDevices) and the CPU's index where it says cpu or
 * host, then replayed device by device straight into the writer.
 */
#include "analysis.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Gives each FREE row whose Device Id is N/A the device of the allocation
 * it frees, and cpu/host rows the CPU's index; rows whose device cannot be
 * told are counted and left out. */
static void resolve_devices(struct sw_rows *rows, const uint32_t *order, size_t n, int32_t cpu) {
    struct sw_map live;
    sw_map_init(&live, 1024);
    for (size_t k = 0; k < n; k++) {
        struct sw_row *r = sw_row_in_order(rows, order, k, n);
        int32_t device = sw_row_device(r);
        if (device == SW_CPU_DEVICE) {
            device = cpu;
            sw_row_set_device(r, cpu);
        }
        int kind = sw_row_kind(r);
        if (kind == K_OOM || kind == K_GAP) continue;
        /* Blocks and segments may share an address: keep them apart. */
        bool block = kind == K_BLK_ALLOC || kind == K_BLK_FREE;
        uint64_t a = (uint64_t)(uint32_t)r->pid | (block ? 1ull << 32 : 0);
        uint64_t b = (uint64_t)r->addr;
        if (kind == K_SEG_ALLOC || kind == K_BLK_ALLOC) {
            if (device != SW_NO_DEVICE) sw_map_put(&live, a, b, (uint32_t)device);
            continue;
        }
        if (device == SW_NO_DEVICE) {
            uint32_t *found = sw_map_get(&live, a, b);
            if (!found) rows->skipped++;
            else sw_row_set_device(r, (int32_t)*found);
        }
        sw_map_del(&live, a, b);
    }
    sw_map_free(&live);
}

static void write_segments(struct sw_writer *w, int32_t device, const struct sw_replayed *end) {
    for (size_t i = 0; i < end->nsegs; i++) {
        const struct sw_end_segment *s = &end->segs[i];
        double allocated = 0;
        for (size_t b = s->first; b < s->first + s->count; b++)
            if (end->blocks[b].active) allocated += end->blocks[b].size;
        sw_writer_dict_start(w);
        sw_writer_key(w, "device");
        sw_writer_int(w, device);
        sw_writer_key(w, "address");
        sw_writer_int(w, s->address);
        sw_writer_key(w, "total_size");
        sw_writer_int(w, s->size);
        sw_writer_key(w, "stream");
        sw_writer_int(w, 0);
        sw_writer_key(w, "segment_type");
        sw_writer_str(w, s->size > 1 << 20 ? "large" : "small");
        sw_writer_key(w, "allocated_size");
        sw_writer_int(w, allocated);
        sw_writer_key(w, "active_size");
        sw_writer_int(w, allocated);
        sw_writer_key(w, "requested_size");
        sw_writer_int(w, allocated);
        sw_writer_key(w, "frames");
        sw_writer_frames(w, s->stack);
        sw_writer_key(w, "blocks");
        sw_writer_list_start(w);
        for (size_t b = s->first; b < s->first + s->count; b++) {
            const struct sw_end_block *k = &end->blocks[b];
            sw_writer_dict_start(w);
            sw_writer_key(w, "address");
            sw_writer_int(w, k->address);
            sw_writer_key(w, "size");
            sw_writer_int(w, k->size);
            sw_writer_key(w, "requested_size");
            sw_writer_int(w, k->size);
            sw_writer_key(w, "state");
            sw_writer_str(w, k->active ? "active_allocated" : "inactive");
            sw_writer_key(w, "frames");
            sw_writer_frames(w, k->stack);
            sw_writer_dict_end(w);
        }
        sw_writer_list_end(w);
        sw_writer_dict_end(w);
    }
}

enum {
    S_ENTRIES, S_DROPPED, S_SEGMENTS, S_DEVICES, S_CPU, S_FREED_BEFORE, S_OVERLAPPED,
    S_SKIPPED, S_BYTES_IN, S_BYTES_OUT, S_COUNT
};

struct options {
    int fd;
    bool json, history;
    double device, max_entries; /* < 0: not given */
};

/* convert.ts snapshotSteps over rows read; fills summary. */
static bool write_snapshot(struct sw_rows *rows, const struct options *o, double *summary,
                           struct sw_error *err) {
    bool has_cpu = rows->has_cpu;
    int32_t cpu = has_cpu ? rows->max_device + 1 : SW_NO_DEVICE;
    uint32_t *order = NULL;
    if (rows->has_cpu || rows->has_no_device) {
        order = malloc(((size_t)rows->count + 1) * sizeof *order);
        if (!order) abort();
        for (uint32_t i = 0; i < rows->count; i++) order[i] = i;
        sw_rows_order(rows, order, rows->count);
        resolve_devices(rows, order, rows->count, cpu);
    }
    /* An empty log still gets device 0: the viewer reads device_traces[0]. */
    size_t devices = (size_t)((has_cpu ? cpu : rows->max_device) + 1);
    if (devices < 1) devices = 1;
    struct sw_device_lists by;
    sw_device_lists_split(rows, order, devices, &by);
    /* Cut from rows already in order, as convert.ts keeps them: ordered
     * again, a list could differ where IDs that are not numbers (NaN, which
     * compares with nothing) tie in time with others. */
    if (!order) sw_device_lists_order(rows, &by, o->device);
    free(order);
    bool ok = true;
    if (o->device >= 0 && o->device >= (double)devices) {
        char cpu_note[64] = "";
        if (has_cpu) snprintf(cpu_note, sizeof cpu_note, " (%d is the CPU)", cpu);
        char range[32] = "";
        if (devices > 1) snprintf(range, sizeof range, "-%zu", devices - 1);
        sw_fail(err, SW_ERR_RANGE, "No device %.0f in the log: it names device%s 0%s%s", o->device,
                devices > 1 ? "s" : "", range, cpu_note);
        ok = false;
    }
    if (ok) {
        size_t shown = o->device >= 0 ? (size_t)o->device + 1 : devices;
        struct sw_writer *w = sw_writer_new(o->fd, o->json, rows);
        struct sw_replayed *ends = calloc(shown, sizeof *ends);
        if (!ends) abort();
        double segments = 0, out_bytes = 0;
        struct sw_trace_job job = {.rows = rows, .lists = by.list, .counts = by.n, .shown = shown,
                                   .device = o->device, .max_entries = o->max_entries,
                                   .history = o->history, .ends = ends};
        sw_writer_dict_start(w);
        sw_writer_key(w, "device_traces");
        sw_writer_list_start(w);
        sw_write_traces(&job, w);
        sw_writer_list_end(w);
        sw_writer_key(w, "segments");
        sw_writer_list_start(w);
        for (size_t d = 0; d < shown && !sw_writer_failed(w); d++) {
            segments += (double)ends[d].nsegs;
            write_segments(w, (int32_t)d, &ends[d]);
        }
        sw_writer_list_end(w);
        sw_writer_dict_end(w);
        ok = sw_writer_finish(w, &out_bytes, err);
        sw_writer_free(w);
        for (size_t d = 0; d < shown; d++) sw_replayed_free(&ends[d]);
        free(ends);
        summary[S_ENTRIES] = job.entries;
        summary[S_DROPPED] = job.dropped;
        summary[S_SEGMENTS] = segments;
        summary[S_DEVICES] = (double)shown;
        summary[S_CPU] = has_cpu ? cpu : -1;
        summary[S_FREED_BEFORE] = job.freed;
        summary[S_OVERLAPPED] = job.overlapped;
        summary[S_SKIPPED] = rows->skipped;
        summary[S_BYTES_IN] = rows->bytes;
        summary[S_BYTES_OUT] = out_bytes;
    }
    sw_device_lists_free(&by);
    return ok;
}

/*
 * Converts the event logs `inputs` (paths separated by NUL bytes, ending
 * with an empty one; several files of one process add up; `host_rows`, a
 * byte per input: 0 leaves out its host rows, copies of another's) into a snapshot
 * written to the existing file `output` (pickle, or JSON when `json`).
 * `device`, `pid`, `max_entries`: -1 when not given; `until_ns`: NaN when
 * rows of any time are wanted; `flags`: 1 writes the history (else the
 * end state only), 2 refuses a `pid` with no memory rows. Fills
 * summary[10] (entries, dropped, segments, devices, CPU device or -1, frees
 * of memory from before the log, overlapped, skipped, bytes read, bytes
 * written). Returns 0, or 1 (not an event log), 2 (an option the log
 * refutes, a value too wide), 3 (a read or write failed) with a line for
 * a person in `message`.
 */
SW_EXPORT int32_t sw_snapshot_convert(const char *inputs, const char *labels, const uint8_t *host_rows,
                                      const char *output,
                                      int32_t json, double device, double pid, double max_entries,
                                      double until_ns, int32_t flags, double *summary,
                                      char *message, int32_t message_cap) {
    struct sw_error err = {0};
    struct sw_rows rows;
    sw_rows_init(&rows);
    struct sw_read_options ro = {.has_pid = pid >= 0, .pid = pid, .has_until = !isnan(until_ns),
                                 .until_ns = until_ns};
    bool ok = true;
    struct timespec t0, t1, t2;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t k = 0;
    for (const char *in = inputs, *label = labels; ok && *in;
         in += strlen(in) + 1, label += strlen(label) + 1, k++) {
        ro.skip_host = host_rows[k] == 0;
        ok = sw_read_memory_rows(in, label, &ro, &rows, &err);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (ok && (flags & 2) && pid >= 0 && rows.count == 0) {
        /* Refused, as a device the log does not name is: an empty
         * snapshot would look like a process that used no memory. */
        sw_fail(&err, SW_ERR_RANGE, "No memory rows of pid %.0f in the log", pid);
        ok = false;
    }
    if (ok) {
        int fd = open(output, O_WRONLY | O_TRUNC | O_CLOEXEC);
        if (fd < 0) {
            sw_fail(&err, SW_ERR_IO, "Cannot write %s: %s", output, strerror(errno));
            ok = false;
        } else {
            struct options o = {.fd = fd, .json = json != 0, .history = (flags & 1) != 0,
                                .device = device, .max_entries = max_entries};
            ok = write_snapshot(&rows, &o, summary, &err);
            if (close(fd) != 0 && ok) {
                sw_fail(&err, SW_ERR_IO, "Cannot write %s: %s", output, strerror(errno));
                ok = false;
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t2);
    /* SW_TIMING=1 says where a slow conversion spent its time, without a
     * profiler: reading (rows, stacks) against ordering, replay and writing. */
    if (getenv("SW_TIMING"))
        fprintf(stderr, "read %.1f ms, write %.1f ms, %u rows\n",
                (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6,
                (t2.tv_sec - t1.tv_sec) * 1e3 + (t2.tv_nsec - t1.tv_nsec) / 1e6, rows.count);
    sw_rows_free(&rows);
    if (ok) return SW_OK;
    snprintf(message, (size_t)message_cap, "%s", err.msg);
    return err.kind;
}
