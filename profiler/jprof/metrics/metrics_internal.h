/* What the files of libjprof's I/O and memory metrics share (metrics.h is
 * what the rest of libjprof calls).  One file per concern:
 *
 *   metrics.c          options, start, fork child; the shared clock, helpers
 *   ../base/metrics_thread.h  what a thread keeps, in its struct jp_thread
 *   metrics_context.c  the per-context extension block of a node
 *   metrics_counts.c   per-thread counts (struct metrics_thread, in the one
 *                      thread state), their sum, rebase and fork; the
 *                      process-wide counts of events without a thread state
 *   metrics_io.c       the plugin's events; an I/O call: per context, per
 *                      thread, series, file
 *   metrics_files.c    the per-file table (metrics_files.h: its hot half)
 *   metrics_series.c   the interval series (I/O bytes, live heap high)
 *   metrics_blocks.c   the live-block table (metrics_blocks.h: its hot half)
 *   metrics_alloc.c    HookitAlloc/HookitFree, the live bytes and their peak
 *   metrics_leaks.c    what was never freed, per allocating node
 *   metrics_control.c  reset and zerobase
 *   metrics_output.c   the profile's columns and metadata
 *
 * Events come from libhookit's wrappers in the thread that made the call,
 * with libhookit's per-thread guard held: nothing here is re-entered by the
 * calls it makes itself.  All memory is mmap'ed: an ALLOC event runs inside
 * the program's malloc() and must not depend on it. */
#ifndef JPROF_METRICS_INTERNAL_H
#define JPROF_METRICS_INTERNAL_H

#include "profiler/jprof/jprof.h"
#include "profiler/jprof/live/attend.h"
#include "metrics.h"

/* ---- options and the clock (metrics.c) ---------------------------------- */
struct metrics_config {
    const struct hookit_host *host;
    int io, alloc;           /* JPROFOPTS io/noio, alloc */
    uint64_t interval_ns;    /* io_interval */
    uint64_t start_tick;     /* host->io_now() at start: slice 0 of the I/O series */
    uint64_t start_coarse;   /* metrics_coarse_ns() then: slice 0 of the heap series */
    double rate;             /* ticks per ns, known at the first event */
    uint64_t interval_ticks; /* interval_ns in ticks */
};
extern struct metrics_config metrics_cfg;

/* The metrics are on: a libhookit with the wrappers, and io or alloc. */
int metrics_active(void);
/* metrics_cfg.rate and interval_ticks from the host's clock. */
void metrics_rate_init(void);
/* CLOCK_MONOTONIC_COARSE: the heap series' time stamps. */
uint64_t metrics_coarse_ns(void);
/* Zeroed private memory reserved without backing, NULL when none. */
void *metrics_reserve(size_t bytes);

/* The small helpers every I/O call or allocation runs are inline: the
 * files do not share a translation unit, and a call each would cost the
 * I/O path a tenth of libjprof's part. */
static inline void metrics_ensure_rate(void)
{
    if (JP_UNLIKELY(!(metrics_cfg.rate > 0)))
        metrics_rate_init();
}

static inline void metrics_atomic_max(uint64_t *at, uint64_t v)
{
    uint64_t cur = __atomic_load_n(at, __ATOMIC_RELAXED);
    while (v > cur && !__atomic_compare_exchange_n(at, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static inline void metrics_atomic_max32(uint32_t *at, uint32_t v)
{
    uint32_t cur = __atomic_load_n(at, __ATOMIC_RELAXED);
    while (v > cur && !__atomic_compare_exchange_n(at, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

#define METRICS_ADD(field, v) __atomic_fetch_add(&(field), (v), __ATOMIC_RELAXED)

/* ---- the calling context (metrics_context.c) ---------------------------- */
/* The node's extension block, made on first use; NULL for no node or a
 * full arena. */
struct node_ext *metrics_ext_of(arena_ref node);

/* The calling thread's current node, 0 when it has none or is inside the
 * profiler's own hook (a signal handler).  The one place that knows where
 * jp_thread keeps it. */
static inline arena_ref metrics_context_node(struct jp_thread *t)
{
    /* A reset or zerobase given while the thread was blocked is applied
     * first: an I/O call right after the wait (before any hook) belongs to
     * the tree after it. */
    if (t && JP_UNLIKELY(jp_pending(t->rec)))
        jp_pending_settle(t);
    return t && !jp_busy(t) ? jp_cur(t) : 0;
}

/* The same block through the thread's cache of its last context. */
static inline struct node_ext *metrics_context_ext(struct metrics_thread *m, arena_ref node)
{
    if (JP_LIKELY(node == m->ctx_node))
        return m->ctx_ext;
    struct node_ext *x = metrics_ext_of(node);
    if (x || !node) {
        m->ctx_node = node;
        m->ctx_ext = x;
    }
    return x;
}

/* ---- counts (metrics_counts.c) ------------------------------------------- */
/* Events of a thread without a live state: atomic adds. */
void metrics_orphan_io(uint64_t read, uint64_t written, uint64_t ticks);
void metrics_orphan_alloc(uint64_t bytes);
void metrics_orphan_free(uint64_t bytes, int tracked);
/* Every state's counts and the orphan counts, less their bases. */
struct metrics_counts metrics_counts_sum(void);
/* The counts so far become the base (reset, zerobase). */
void metrics_counts_rebase(void);
/* In a fork child: every state's numbers to zero, what other states held
 * of the live heap folded into the total (metrics_alloc.c). */
void metrics_counts_fork_child(void);

/* ---- the live-block table (metrics_blocks.h) ----------------------------- */
void metrics_blocks_start(void);
void metrics_blocks_fork_child(void);

/* ---- the per-file table (metrics_files.c) -------------------------------- */
int metrics_files_start(void);
void metrics_files_clear(void); /* reset, zerobase: no lock */
void metrics_files_fork_child(void);
int metrics_files_meta(struct profile *p, double ticks_per_ns);

/* ---- the interval series (metrics_series.c) ------------------------------ */
int metrics_series_start(void);
/* Bumped by reset and zerobase: a thread that sees a new value drops what
 * it had not yet added to the series. */
extern uint32_t metrics_series_epoch __attribute__((visibility("hidden")));
/* After reset/zerobase: what m had not yet added belongs to before. */
void metrics_series_catch_up(struct metrics_thread *m);
/* m is stale (a reset/zerobase) or tick is past its I/O slice. */
void metrics_series_io_move(struct metrics_thread *m, uint64_t tick);

/* Bytes into m's current I/O slice (every I/O call that moved bytes: the
 * common case inline). */
static inline void metrics_series_io(struct metrics_thread *m, uint64_t tick, uint64_t read, uint64_t written)
{
    if (JP_UNLIKELY(m->epoch != __atomic_load_n(&metrics_series_epoch, __ATOMIC_RELAXED)
                    || tick >= m->io_end))
        metrics_series_io_move(m, tick);
    m->io_read += read;
    m->io_written += written;
}
/* m's pending bytes into the series. */
void metrics_series_io_flush(struct metrics_thread *m);
/* No thread state: straight into the series. */
void metrics_series_io_direct(uint64_t tick, uint64_t read, uint64_t written);
/* A new high of m's heap slice, or its periodic look at the clock. */
void metrics_series_heap(struct metrics_thread *m, int64_t live);
void metrics_series_heap_direct(int64_t live);
void metrics_series_clear(void); /* reset, zerobase */
void metrics_series_fork_child(void);
/* "INDEX VALUE..." lines as io_series (memory 0) or alloc_series. */
int metrics_series_meta(struct profile *p, int memory);

/* ---- the live heap (metrics_alloc.c) ------------------------------------- */
/* Live bytes now, every state's batch included. */
int64_t metrics_live_now(void);
/* m's batch into the process total. */
void metrics_live_publish(struct metrics_thread *m);
uint64_t metrics_live_peak(void);
uint32_t metrics_block_epoch(void);
void metrics_heap_reset(void);
void metrics_heap_zerobase(void);
/* In a fork child: live, every batch included, becomes the total. */
void metrics_heap_fork_child(int64_t live);

/* ---- leaks (metrics_leaks.c) --------------------------------------------- */
/* What was never freed, per node: built once per profile (the first
 * caller), dropped by metrics_leaks_drop. */
int metrics_leaks_build(void);
/* count and bytes never freed that node allocated; 0 when none. */
int metrics_leaks_of(arena_ref node, uint64_t *count, uint64_t *bytes);
void metrics_leaks_totals(uint64_t *count, uint64_t *bytes, uint64_t *no_context);
void metrics_leaks_drop(void);

#endif
