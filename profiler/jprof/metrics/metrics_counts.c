/* The I/O and memory totals.  Each thread state counts in its own
 * struct metrics_thread (t->metrics, in the one per-thread state of
 * jprof.h), without atomics; a profile adds up every state ever made
 * (jp_thread_all), less the base that reset and zerobase set.  States are
 * recycled with their counts, which are process totals, so an ended
 * thread's counts are never lost.  A thread without a live state (before
 * its set-up, after its end, the control thread) has no counts of its
 * own: its events go to the process-wide orphan counts, with atomics
 * (rare, so the cost does not matter). */
#include "metrics_internal.h"

#include <string.h>

static struct metrics_counts orphan, orphan_base;

#define NCOUNTS (sizeof(struct metrics_counts) / sizeof(uint64_t))

/* A new tree: the cached context is a node of another tree. */
JP_NOINSTR void jp_metrics_thread_begin(struct jp_thread *t)
{
    t->metrics.ctx_node = 0;
    t->metrics.ctx_ext = NULL;
}

/* The thread's pending numbers go where other threads see them: its live
 * heap batch (other threads compare the total with the peak) and its
 * interval bytes. */
JP_NOINSTR void jp_metrics_thread_end(struct jp_thread *t)
{
    struct metrics_thread *m = &t->metrics;
    metrics_series_io_flush(m);
    if (m->live_delta)
        metrics_live_publish(m);
}

JP_NOINSTR void metrics_orphan_io(uint64_t read, uint64_t written, uint64_t ticks)
{
    METRICS_ADD(orphan.io_calls, 1);
    METRICS_ADD(orphan.bytes_read, read);
    METRICS_ADD(orphan.bytes_written, written);
    METRICS_ADD(orphan.io_ticks, ticks);
}

JP_NOINSTR void metrics_orphan_alloc(uint64_t bytes)
{
    METRICS_ADD(orphan.allocs, 1);
    METRICS_ADD(orphan.alloc_bytes, bytes);
}

JP_NOINSTR void metrics_orphan_free(uint64_t bytes, int tracked)
{
    if (!tracked) {
        METRICS_ADD(orphan.untracked_frees, 1);
        return;
    }
    METRICS_ADD(orphan.frees, 1);
    METRICS_ADD(orphan.free_bytes, bytes);
}

/* sum += counts - base, field by field (a count below its base: a
 * thread that raced the rebase; nothing rather than a wrapped number). */
JP_NOINSTR static void add_counts(struct metrics_counts *sum, const struct metrics_counts *counts,
                                  const struct metrics_counts *base)
{
    uint64_t *out = (uint64_t *)sum;
    const uint64_t *c = (const uint64_t *)counts, *b = (const uint64_t *)base;
    for (size_t i = 0; i < NCOUNTS; i++) {
        uint64_t v = __atomic_load_n(&c[i], __ATOMIC_RELAXED);
        uint64_t at = __atomic_load_n(&b[i], __ATOMIC_RELAXED);
        out[i] += v > at ? v - at : 0;
    }
}

JP_NOINSTR static void copy_counts(struct metrics_counts *to, const struct metrics_counts *from)
{
    uint64_t *out = (uint64_t *)to;
    const uint64_t *in = (const uint64_t *)from;
    for (size_t i = 0; i < NCOUNTS; i++)
        __atomic_store_n(&out[i], __atomic_load_n(&in[i], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

/* Pending interval bytes are flushed on the way: the other threads have
 * ended or are not in the middle of an update that matters for a
 * snapshot. */
JP_NOINSTR struct metrics_counts metrics_counts_sum(void)
{
    struct metrics_counts sum = { 0 };
    for (struct jp_thread *t = jp_thread_all(); t; t = t->all_next) {
        metrics_series_io_flush(&t->metrics);
        add_counts(&sum, &t->metrics.c, &t->metrics.base);
    }
    add_counts(&sum, &orphan, &orphan_base);
    return sum;
}

/* Rebased rather than zeroed: a thread busy counting during the command
 * loses nothing, and no thread writes another's counts. */
JP_NOINSTR void metrics_counts_rebase(void)
{
    for (struct jp_thread *t = jp_thread_all(); t; t = t->all_next)
        copy_counts(&t->metrics.base, &t->metrics.c);
    copy_counts(&orphan_base, &orphan);
}

/* Every state's numbers were the parent's.  The series fields start over
 * too (epoch 0: the next event catches up with the series). */
JP_NOINSTR void metrics_counts_fork_child(void)
{
    for (struct jp_thread *t = jp_thread_all(); t; t = t->all_next)
        memset(&t->metrics, 0, sizeof t->metrics);
    memset(&orphan, 0, sizeof orphan);
    memset(&orphan_base, 0, sizeof orphan_base);
}
