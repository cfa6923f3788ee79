/*
 * Reading a thread's tree out of an arena (profile/arena.h) and turning it
 * into a profile thread: one walk shared by libjprof (profiles written by
 * the process itself), a thread copying its own tree for a live reader,
 * and the live reader (`hookit top`, `snapshot`, `recover`).
 */
#ifndef HOOKIT_ARENA_WALK_H
#define HOOKIT_ARENA_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "profile/arena.h"
#include "profile/u64map.h"
#include "profile/profile.h"

/* An arena mapped at base, of which size bytes may be read. */
struct arena_view {
    const char *base;
    uint64_t size;
};

/* The node at ref, or NULL when ref is 0, the header or outside the view. */
const struct arena_node *arena_view_node(const struct arena_view *v, arena_ref ref);

/*
 * Visit the tree under root (root excluded: its children are the thread's
 * roots) in preorder; a visit returning non-zero stops the walk.  Returns
 * the number of nodes visited; *complete (may be NULL) says whether the
 * walk ended (0: stopped, or a reference outside the view).  Allocates
 * nothing.
 */
typedef int (*arena_visit_fn)(void *ctx, arena_ref ref, const struct arena_node *node);
uint64_t arena_tree_walk(const struct arena_view *v, arena_ref root, arena_visit_fn visit, void *ctx,
                         int *complete);

/*
 * The tree under root (root excluded: its children are the thread's roots)
 * in preorder into out[0 .. cap) (out may be NULL to count).  Links are
 * followed with acquire loads, so only complete nodes are seen.  Returns
 * the number of nodes copied; *complete (may be NULL) says whether the
 * walk ended (0: more than cap nodes, or a reference outside the view).
 * Allocates nothing.
 */
uint64_t arena_tree_copy(const struct arena_view *v, arena_ref root, struct arena_copy_node *out,
                         uint64_t cap, int *complete);

/*
 * A reset or zerobase pending for the thread (req: its request bits, at:
 * its pending_at; profile/arena.h) applied to a copy of its tree, as the
 * thread will apply it: zerobase zeroes every count, time and sample;
 * reset keeps only the open path (stack[1 .. *depth], each frame's node a
 * child of the one before), without numbers; either way an open frame's
 * time is counted from `at` if it was entered before.  Node functions for
 * a reset are read from the arena (v).  Returns the copy's new node
 * count (*depth may shrink with it).  Allocates nothing.
 */
uint32_t arena_copy_pending(const struct arena_view *v, uint32_t req, uint64_t at,
                            struct arena_copy_node *nodes, uint32_t n, struct arena_frame *stack,
                            uint32_t *depth);

/*
 * A thread's tree and open frames copied at one moment, the way
 * profile/arena.h tells a reader to: under the thread's seq, the caller
 * retrying while a copy is torn.  One primitive for every reader: libjprof
 * writing another running thread's tree (profiler/jprof/output/build.c) and the
 * live reader (profile/live.c).
 *
 * The buffers grow as needed and are kept across attempts (and threads),
 * so a retry does not allocate.  Unlike the functions above, this one
 * allocates (realloc): not for a hook or a signal handler.
 */
struct arena_thread_copy {
    struct arena_copy_node *nodes; /* nodes[0 .. n): the tree in preorder */
    struct arena_frame *stack;     /* stack[0 .. depth]: with ARENA_COPY_FRAMES */
    uint64_t cap;                  /* room in nodes */
    uint32_t fcap;                 /* room in stack */
    uint32_t n, depth;             /* the last whole copy's nodes and open frames */
    uint32_t pending;              /* the reset/zerobase bits applied to it (ARENA_COPY_PENDING) */
    uint64_t pending_at;           /* ... as of this moment (arena_thread.pending_at) */
    /* A whole copy is in the buffers (seq-checked or not); the caller
     * clears it. */
    int taken;
};

/* What arena_copy_thread takes besides the tree.  FRAMES: the open
 * frames, stack[0 .. rec->depth] (else depth 0).  PENDING: a pending reset
 * or zerobase, applied (arena_copy_pending).  ODD: an odd seq taken as it
 * is, its writer will not move (dead, stopped, or the caller itself). */
#define ARENA_COPY_FRAMES 0x1u
#define ARENA_COPY_PENDING 0x2u
#define ARENA_COPY_ODD 0x4u

/*
 * One attempt at copying rec's tree into c (view v).  Returns 1: a
 * consistent copy (seq even, or odd with ARENA_COPY_ODD, and unchanged
 * across the copy); 0: retry, because the seq was odd (nothing copied) or
 * moved (c holds that torn copy, c->taken set) or the buffers had to
 * grow; -1: out of memory, or a reference outside the view while the seq
 * stood still (a damaged arena).
 */
int arena_copy_thread(const struct arena_view *v, const struct arena_thread *rec, unsigned flags,
                      struct arena_thread_copy *c);
/* Room for n nodes and depth + 1 frames, at least doubling.  0 or -1. */
int arena_thread_copy_reserve(struct arena_thread_copy *c, uint64_t n, uint32_t depth);
void arena_thread_copy_free(struct arena_thread_copy *c);

/* Function addresses to indexes into a profile's function table. */
struct arena_funcs {
    struct u64map map;          /* address -> index in array */
    struct prof_func *array;
    uint32_t n, cap;
};
int arena_funcs_init(struct arena_funcs *f);
/* The index of fn (added when new), or -1 when out of memory. */
int64_t arena_funcs_index(struct arena_funcs *f, uint64_t fn);
/* Move the table into p->funcs / p->nfuncs (names still NULL).  0 or -1. */
int arena_funcs_to_profile(struct arena_funcs *f, struct profile *p);
void arena_funcs_free(struct arena_funcs *f);

/* How node numbers become times. */
struct arena_timing {
    double ticks_per_ns;
    uint64_t sample_period_ns;  /* timer=sample: a node's own time is samples * period */
    /* compensate: a node's inclusive time loses inner_ns per call of its
     * own and full_ns per call below it (libjprof's calibrate.c). */
    int compensate;
    uint64_t overhead_full_ns, overhead_inner_ns;
    /* Sampled, for readers outside the process: an open frame with a
     * start time (t0 != 0) is in a blocking call since then (libjprof's
     * wait.c writes it when the call begins and clears it when it ends),
     * and its time so far counts as the frame's own.  The profile libjprof
     * builds itself counts such a wait from its private state instead. */
    int open_waits;
};

/*
 * th->nodes from a copy: inclusive ticks plus, for each node still open in
 * the shadow stack (stack[1 .. depth], frame i holding the node at tree
 * depth i), the time from its entry to now; ticks become nanoseconds;
 * exclusive time = inclusive - children's inclusive.  Sampled: the samples
 * are the exclusive time, inclusive adds the children's.
 * Returns 0 or -1 (out of memory).
 */
int arena_copy_to_thread(struct profile *p, struct arena_funcs *funcs,
                         const struct arena_copy_node *nodes, uint32_t n,
                         const struct arena_frame *stack, uint32_t depth, uint64_t now,
                         const struct arena_timing *tm, struct prof_thread *th);

/*
 * The contexts whose calls were inlined copies (ARENA_NODE_INLINED in the
 * nodes of view v that the copy's refs name): th's column "inlined" of 1s,
 * made only when some node has it (hookit report --as-compiled folds
 * them).  libjprof's own profiles and live readers' both.  0 or -1.
 */
int arena_inlined_column(struct profile *p, struct prof_thread *th, const struct arena_view *v,
                         const struct arena_copy_node *nodes, uint32_t n);

/*
 * timer=sample, after arena_copy_to_thread and th's wait_ns column (if
 * any): each node's time gets its blocking calls, exclusive its own and
 * inclusive its subtree's, so that a sampled time means what an exact one
 * does; nodes' sample counts go to a `samples` column (the estimate's
 * error).  libjprof's own profiles and live readers' both.  0 or -1.
 */
int arena_sampled_times(struct profile *p, struct prof_thread *th, const struct arena_copy_node *nodes);

/*
 * The control log (struct arena_control_log, slot 2 of a version-2 arena)
 * copied between two equal even seq loads into *out; 0, or -1 when a
 * writer held it through every try (out then says no command).  The
 * writer's side is libjprof's (control.c).
 */
int arena_control_log_read(const struct arena_control_log *log, struct arena_control_log *out);
/*
 * The last reset or zerobase as p's metadata, when there was one (log
 * may be NULL: none):
 * reset_command (reset or zerobase), reset_count, reset_at_ns (after
 * start_mono_ns, the process's start; 0 when before it: a fork child's
 * parent's).  0 or -1 (out of memory).  docs/profile-format.md.
 */
int arena_control_log_meta(struct profile *p, const struct arena_control_log *log, uint64_t start_mono_ns);

/* ticks to ns, rounded, as libjprof does. */
static inline uint64_t arena_ticks_to_ns(uint64_t ticks, double ticks_per_ns)
{
    return (uint64_t)((double)ticks / ticks_per_ns + 0.5);
}

#endif
