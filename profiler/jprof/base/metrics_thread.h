/* The I/O and memory numbers a thread state keeps (struct jp_thread's
 * `metrics`, jprof.h; written by metrics_io.c and metrics_alloc.c).
 *
 * They live in the one per-thread state, reached through jp_self like the
 * tree, so the profiler has one per-thread record and one TLS variable
 * (hence this header's place in base/, below the metrics' folder).
 * Unlike the rest of the state they survive recycling (thread.c's
 * reuse_thread leaves them alone): the counts are additive process totals,
 * so a state handed to a new thread simply goes on adding, and the states
 * ever made (jp_thread_all) hold every count there was.  A thread without
 * a live state (before its set-up, after its end, the control thread)
 * counts into process-wide atomics instead (metrics_counts.c). */
#ifndef JPROF_METRICS_THREAD_H
#define JPROF_METRICS_THREAD_H

#include "profile/arena.h"
#include <stdint.h>

/* What a thread counts, without atomics; added up when a profile is
 * written.  reset and zerobase copy the counts into a base, which is
 * subtracted.  All uint64_t: they are summed and rebased as an array. */
struct metrics_counts {
    uint64_t io_calls, bytes_read, bytes_written, io_ticks;
    uint64_t allocs, alloc_bytes, frees, free_bytes, untracked_frees;
};

struct node_ext;

struct metrics_thread {
    struct metrics_counts c, base;
    /* the calling context of the last event and its extension block: a
     * loop's consecutive events skip the node (metrics_internal.h) */
    arena_ref ctx_node;
    struct node_ext *ctx_ext;
    int64_t live_delta; /* this state's batch of the live heap */
    uint32_t nallocs;   /* allocations, for the heap series' clock */
    uint32_t epoch;     /* the series epoch the fields below belong to */
    /* the I/O interval this thread is adding to, and what it added */
    uint32_t io_idx;
    uint64_t io_end; /* first tick after it (0: none yet) */
    uint64_t io_read, io_written;
    /* the heap interval (coarse ns) and the highest live size recorded in it */
    uint32_t mem_idx;
    uint64_t mem_end, mem_max;
};

#endif
