/* The interval series: per slice of io_interval, the bytes read and
 * written (slices of the I/O clock, from the calls' own time stamps) and
 * the highest live heap size (slices of CLOCK_MONOTONIC_COARSE).  A thread
 * adds its bytes to its current slice privately and into the shared array
 * (atomic adds) when it moves on, so threads do not share a line per
 * call. */
#include "metrics_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INTERVALS (1u << 20)

struct interval {
    uint64_t bytes_read, bytes_written;
    uint64_t live_max; /* highest live heap bytes seen in it (+1: 0 = none) */
};
static struct interval *series;
static uint32_t last_interval; /* highest index used */

uint32_t metrics_series_epoch; /* metrics_internal.h */

JP_NOINSTR int metrics_series_start(void)
{
    if (!series)
        series = metrics_reserve((size_t)MAX_INTERVALS * sizeof *series);
    return series ? 0 : -1;
}

/* The slice of the series at t (from t0, slices of width), and where it
 * ends.  The last slice takes whatever comes after the array. */
JP_NOINSTR static uint32_t slice_of(uint64_t t, uint64_t t0, uint64_t width, uint64_t *end)
{
    uint64_t i = t > t0 ? (t - t0) / width : 0;
    uint32_t idx = i >= MAX_INTERVALS ? MAX_INTERVALS - 1 : (uint32_t)i;
    metrics_atomic_max32(&last_interval, idx);
    *end = t0 + (i + 1) * width;
    return idx;
}

JP_NOINSTR void metrics_series_catch_up(struct metrics_thread *m)
{
    m->io_read = m->io_written = 0;
    m->io_end = 0;
    m->mem_end = 0;
    m->mem_max = 0;
    m->epoch = __atomic_load_n(&metrics_series_epoch, __ATOMIC_RELAXED);
}

JP_NOINSTR static void catch_up_if_stale(struct metrics_thread *m)
{
    if (JP_UNLIKELY(m->epoch != __atomic_load_n(&metrics_series_epoch, __ATOMIC_RELAXED)))
        metrics_series_catch_up(m);
}

JP_NOINSTR void metrics_series_io_flush(struct metrics_thread *m)
{
    if (!series || (!m->io_read && !m->io_written))
        return;
    if (m->epoch != __atomic_load_n(&metrics_series_epoch, __ATOMIC_RELAXED))
        return; /* from before a reset/zerobase */
    METRICS_ADD(series[m->io_idx].bytes_read, m->io_read);
    METRICS_ADD(series[m->io_idx].bytes_written, m->io_written);
    m->io_read = m->io_written = 0;
}

/* What the inline metrics_series_io leaves out: a stale thread catches
 * up (its pending bytes are from before), and one past its slice flushes
 * and takes the slice of tick. */
JP_NOINSTR void metrics_series_io_move(struct metrics_thread *m, uint64_t tick)
{
    catch_up_if_stale(m);
    if (tick >= m->io_end) {
        metrics_series_io_flush(m);
        m->io_idx = slice_of(tick, metrics_cfg.start_tick, metrics_cfg.interval_ticks, &m->io_end);
    }
}

JP_NOINSTR void metrics_series_io_direct(uint64_t tick, uint64_t read, uint64_t written)
{
    if (!series)
        return;
    uint64_t end;
    uint32_t idx = slice_of(tick, metrics_cfg.start_tick, metrics_cfg.interval_ticks, &end);
    METRICS_ADD(series[idx].bytes_read, read);
    METRICS_ADD(series[idx].bytes_written, written);
}

/* errno kept: clock_gettime runs inside the program's malloc. */
JP_NOINSTR static uint64_t coarse_now(void)
{
    int saved = errno;
    uint64_t now = metrics_coarse_ns();
    errno = saved;
    return now;
}

/* noinline: reached on a new high of the thread's slice and every 32nd
 * allocation, not on the allocation path itself. */
JP_NOINSTR __attribute__((noinline)) void metrics_series_heap(struct metrics_thread *m, int64_t live)
{
    catch_up_if_stale(m);
    if (!series || live <= 0)
        return;
    uint64_t now = coarse_now();
    if (now >= m->mem_end) {
        m->mem_idx = slice_of(now, metrics_cfg.start_coarse, metrics_cfg.interval_ns, &m->mem_end);
        m->mem_max = 0;
    }
    if ((uint64_t)live > m->mem_max) {
        m->mem_max = (uint64_t)live;
        metrics_atomic_max(&series[m->mem_idx].live_max, (uint64_t)live + 1);
    }
}

JP_NOINSTR void metrics_series_heap_direct(int64_t live)
{
    if (!series || live <= 0)
        return;
    uint64_t end;
    uint32_t idx = slice_of(coarse_now(), metrics_cfg.start_coarse, metrics_cfg.interval_ns, &end);
    metrics_atomic_max(&series[idx].live_max, (uint64_t)live + 1);
}

/* The calling thread drops its pending numbers at once; the others when
 * they see the new epoch. */
JP_NOINSTR void metrics_series_clear(void)
{
    METRICS_ADD(metrics_series_epoch, 1);
    struct jp_thread *self = jp_self_live();
    if (self)
        metrics_series_catch_up(&self->metrics);
    for (uint32_t i = 0; series && i <= last_interval; i++) {
        __atomic_store_n(&series[i].bytes_read, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&series[i].bytes_written, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&series[i].live_max, 0, __ATOMIC_RELAXED);
    }
}

JP_NOINSTR void metrics_series_fork_child(void)
{
    if (series)
        memset(series, 0, (size_t)(last_interval + 1) * sizeof *series);
    last_interval = 0;
}

/* "INDEX VALUE..." lines for the intervals that saw something. */
JP_NOINSTR int metrics_series_meta(struct profile *p, int memory)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return -1;
    for (uint32_t i = 0; series && i <= last_interval; i++) {
        const struct interval *iv = &series[i];
        if (memory && iv->live_max)
            fprintf(f, "%" PRIu32 " %" PRIu64 "\n", i, iv->live_max - 1);
        else if (!memory && (iv->bytes_read || iv->bytes_written))
            fprintf(f, "%" PRIu32 " %" PRIu64 " %" PRIu64 "\n", i, iv->bytes_read, iv->bytes_written);
    }
    if (fclose(f) != 0)
        return -1;
    int rc = profile_set_meta(p, memory ? "alloc_series" : "io_series", buf);
    free(buf);
    return rc;
}
