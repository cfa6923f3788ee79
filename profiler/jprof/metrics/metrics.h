/* libjprof's I/O and memory metrics (metrics*.c, laid out in
 * metrics_internal.h): what jprof.c, build.c, options.c and thread.c
 * call.  Per calling context (the calling thread's current node, an
 * extension block of the node), per file, per time interval, and the live
 * blocks of memory with the context that allocated them. */
#ifndef JPROF_METRICS_H
#define JPROF_METRICS_H

#include <hookit/profiler.h>
#include "profile/arena.h"
#include "profile/profile.h"

/* JPROFOPTS io, noio, alloc, io_interval=DURATION (options.c's table). */
int jp_opt_io(const char *value);
int jp_opt_noio(const char *value);
int jp_opt_alloc(const char *value);
int jp_opt_io_interval(const char *value);

/* The per-context numbers: an extension block (arena_node.ext), struct
 * node_ext (profile/arena.h, where live readers find its wait fields),
 * made for a node the first time it does I/O, allocates or waits; only
 * the node's own thread writes it. */
#define NODE_EXT_SLOTS ARENA_EXT_SLOTS
/* node's extension block, made on first use by the node's own thread;
 * NULL for no node or a full arena. */
struct node_ext *jp_node_ext(arena_ref node);

/* HookitStart: the capabilities to add (HOOKIT_CAP_IO, HOOKIT_CAP_ALLOC). */
uint32_t jp_metrics_start(const struct hookit_host *host);
/* HookitEvent for HOOKIT_EV_IO, _ALLOC, _FREE. */
void jp_metrics_event(const struct hookit_event *ev);
/* In a forked child: the child's numbers start from zero. */
void jp_metrics_fork_child(void);
/* thread.c: a thread state starts (a new thread, a recycled state, a
 * scratch state, a fork child) and ends.  The counts in t->metrics are
 * kept across both: they are summed over every state ever made. */
struct jp_thread;
void jp_metrics_thread_begin(struct jp_thread *t);
void jp_metrics_thread_end(struct jp_thread *t);
/* ARENA_CMD_RESET / ARENA_CMD_ZEROBASE (control.c's run_command, before the
 * trees): the I/O and memory numbers follow the call counts. */
void jp_metrics_control(uint32_t cmd);

/* build.c: metric columns for th, whose node i came from arena node refs[i]. */
int jp_metrics_thread(struct profile *p, struct prof_thread *th,
                      const struct arena_copy_node *nodes, uint32_t n);
/* build.c: the per-file table, the interval series, totals and leaks as
 * metadata (docs/io.md). */
int jp_metrics_process(struct profile *p);
/* A new zeroed metric column of n values appended to th's (metrics_output.c,
 * for build.c and wait.c); NULL when out of memory. */
uint64_t *jp_new_column(struct profile *p, struct prof_thread *th, const char *name, uint32_t n);

/* ---- where the tree may be wrong (unexact.c) --------------------------------
 * tree's fallbacks count each unmatched exit on the context it concerns
 * (through jp_tree_unmatched, tree/restart.c);
 * build.c writes the per-node column "unmatched_exits" (and
 * "undecided_landing_pads", below). */
void jp_unmatched_at(arena_ref node, uint64_t exits);
int jp_unmatched_thread(struct profile *p, struct prof_thread *th, const struct arena_copy_node *nodes,
                        uint32_t n);
/* A landing pad whose owner was not decided kept node's frame open, and
 * something else than its exit closed it (tree/flow.c's doubt): the calls
 * the landing pad made may be one level too deep, under it.  build.c
 * writes the per-node column "undecided_landing_pads" (only when some
 * node has one) and their sum as the metadata of the same name. */
void jp_undecided_pad_at(arena_ref node);
int jp_undecided_process(struct profile *p);

#endif
