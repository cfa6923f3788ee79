/* Memory: the plugin's direct entry points HookitAlloc and HookitFree
 * (include/hookit/profiler.h), and the live heap's bytes and peak.
 *
 * Each thread state keeps what it allocated minus what it freed in its own
 * batch (metrics_thread.live_delta) and adds the batch to the process
 * total when it passes LIVE_BATCH either way, so threads do not share a
 * counter on every call.  A thread checks the peak against the total plus
 * its own batch: exact while one thread allocates, and within LIVE_BATCH
 * per other running thread otherwise (an ending thread adds its batch:
 * jp_metrics_thread_end).  A thread without a live state adds at once. */
#include "metrics_blocks.h"

#define LIVE_BATCH (64 << 10)

static struct {
    int64_t pub; /* the batches added so far */
    /* pub + every batch at the last reset: blocks of before are no longer
     * tracked */
    int64_t base;
    uint64_t peak;        /* highest live bytes seen */
    uint32_t block_epoch; /* bumped by reset: older blocks are untracked */
} heap __attribute__((aligned(64)));

JP_NOINSTR uint32_t metrics_block_epoch(void)
{
    return __atomic_load_n(&heap.block_epoch, __ATOMIC_RELAXED);
}

/* noinline: once per LIVE_BATCH bytes, off the allocation path. */
JP_NOINSTR __attribute__((noinline)) void metrics_live_publish(struct metrics_thread *m)
{
    METRICS_ADD(heap.pub, m->live_delta);
    m->live_delta = 0;
}

/* Live bytes now, every state's batch included (when writing a profile). */
JP_NOINSTR int64_t metrics_live_now(void)
{
    int64_t live = __atomic_load_n(&heap.pub, __ATOMIC_RELAXED);
    for (struct jp_thread *t = jp_thread_all(); t; t = t->all_next)
        live += __atomic_load_n(&t->metrics.live_delta, __ATOMIC_RELAXED);
    return live - heap.base;
}

JP_NOINSTR uint64_t metrics_live_peak(void)
{
    return __atomic_load_n(&heap.peak, __ATOMIC_RELAXED);
}

JP_NOINSTR static void raise_peak(int64_t live)
{
    if (JP_UNLIKELY(live > (int64_t)__atomic_load_n(&heap.peak, __ATOMIC_RELAXED)))
        metrics_atomic_max(&heap.peak, (uint64_t)live);
}

/* A thread without a live state: no batch, no context; counted in the
 * process-wide counts. */
JP_NOINSTR __attribute__((noinline)) static void alloc_no_thread(uintptr_t p, uint64_t size)
{
    uint64_t replaced = metrics_block_insert(p, size, 0, metrics_block_epoch());
    int64_t delta = (int64_t)(size - replaced);
    int64_t live = METRICS_ADD(heap.pub, delta) + delta - heap.base;
    metrics_orphan_alloc(size);
    raise_peak(live);
    metrics_series_heap_direct(live);
}

JP_NOINSTR __attribute__((noinline)) static void free_no_thread(const struct block *b, int found)
{
    metrics_orphan_free(found ? b->size : 0, found);
    if (found)
        METRICS_ADD(heap.pub, -(int64_t)b->size);
}

JP_NOINSTR static void count_alloc(struct node_ext *x, uint64_t size)
{
    if (x) {
        x->allocs++;
        x->alloc_bytes += size;
    }
}

JP_NOINSTR static void count_free(struct node_ext *x, uint64_t size)
{
    if (x) {
        x->frees++;
        x->free_bytes += size;
    }
}

JP_EXPORT JP_NOINSTR void HookitAlloc(void *ptr, uint64_t size, void *old_ptr)
{
    (void)old_ptr; /* realloc's old block came as a HookitFree before */
    struct jp_thread *t = jp_self_live();
    if (JP_UNLIKELY(!t)) {
        alloc_no_thread((uintptr_t)ptr, size);
        return;
    }
    struct metrics_thread *m = &t->metrics;
    arena_ref node = metrics_context_node(t);
    uint64_t replaced = metrics_block_insert((uintptr_t)ptr, size, node, metrics_block_epoch());
    count_alloc(metrics_context_ext(m, node), size);
    m->c.allocs++;
    m->c.alloc_bytes += size;
    int64_t delta = m->live_delta += (int64_t)(size - replaced);
    if (JP_UNLIKELY(delta >= LIVE_BATCH))
        metrics_live_publish(m);
    int64_t live = __atomic_load_n(&heap.pub, __ATOMIC_RELAXED) + m->live_delta - heap.base;
    raise_peak(live);
    /* the heap series: on a new high of the slice, every 32nd allocation
     * to notice that a new slice began, and at once after a reset or
     * zerobase, which another thread (the control thread) may have carried
     * out: mem_max is still the old high until the thread catches up, and
     * a reset's live bytes, counted from 0, stay below it */
    if (JP_UNLIKELY(live > (int64_t)m->mem_max) || JP_UNLIKELY((++m->nallocs & 31) == 0)
        || JP_UNLIKELY(m->epoch != __atomic_load_n(&metrics_series_epoch, __ATOMIC_RELAXED)))
        metrics_series_heap(m, live);
}

JP_EXPORT JP_NOINSTR void HookitFree(void *ptr)
{
    struct block b;
    struct jp_thread *t = jp_self_live();
    int found = metrics_block_remove((uintptr_t)ptr, &b) == 0 && b.epoch == metrics_block_epoch();
    if (JP_UNLIKELY(!t)) {
        free_no_thread(&b, found);
        return;
    }
    struct metrics_thread *m = &t->metrics;
    if (JP_UNLIKELY(!found)) {
        m->c.untracked_frees++;
        return;
    }
    count_free(metrics_context_ext(m, metrics_context_node(t)), b.size);
    m->c.frees++;
    m->c.free_bytes += b.size;
    int64_t delta = m->live_delta -= (int64_t)b.size;
    if (JP_UNLIKELY(delta <= -LIVE_BATCH))
        metrics_live_publish(m);
}

/* reset forgets the blocks allocated so far (their frees become
 * untracked, they are no leaks) and counts live bytes from 0. */
JP_NOINSTR void metrics_heap_reset(void)
{
    METRICS_ADD(heap.block_epoch, 1);
    __atomic_store_n(&heap.base, heap.base + metrics_live_now(), __ATOMIC_RELAXED);
    __atomic_store_n(&heap.peak, 0, __ATOMIC_RELAXED);
}

/* zerobase keeps the blocks (they are still live, and leaks if never
 * freed) and restarts the peak from the live bytes now. */
JP_NOINSTR void metrics_heap_zerobase(void)
{
    int64_t live = metrics_live_now();
    __atomic_store_n(&heap.peak, live > 0 ? (uint64_t)live : 0, __ATOMIC_RELAXED);
}

JP_NOINSTR void metrics_heap_fork_child(int64_t live)
{
    heap.pub = live + heap.base;
    heap.peak = live > 0 ? (uint64_t)live : 0;
}
