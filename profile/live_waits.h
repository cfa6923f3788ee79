/*
 * Time waiting, and CPU time sampled, in a live reader's profile (`hookit
 * snapshot`, `top`, `recover`; docs/live.md, "Waiting and CPU time"): the
 * columns libjprof's own profiles have (wait_ns, wait_calls, cpu_ns; see
 * profiler/jprof/metrics/wait.c), read from the arena's extension blocks.
 */
#ifndef HOOKIT_LIVE_WAITS_H
#define HOOKIT_LIVE_WAITS_H

#include "profile/arena_walk.h"
#include "profile/live.h"

/*
 * th's wait_ns and wait_calls columns from the nodes t copied (view v; w:
 * the arena's slot 3), and cpu_ns under JPROFOPTS=cpu: closed blocking
 * calls from each node's counters, and a call still blocking counted up to
 * the copy's moment (node_ext.wait_since), as libjprof counts a thread
 * still blocked when it writes a profile.  A reset or zerobase pending for
 * the thread (shown applied) leaves only the call in progress, from the
 * command's moment.  wait_rate: live_wait_rate's; 0 (no wait times):
 * no wait columns.  The counters are read after the tree's copy (a call
 * that ended in between is in them): timed exactly (!sampled), a node's
 * wait is capped at its exclusive time (call it after
 * arena_copy_to_thread).
 * Returns 1 when th got wait columns, 0 when not, -1 when out of memory.
 */
int live_wait_columns(const struct arena_view *v, const struct arena_waits *w, double wait_rate, int sampled,
                      const struct live_snapshot *s, const struct live_thread *t, struct profile *p,
                      struct prof_thread *th);
/* The ticks per ns of the wait counters (w: the arena's struct
 * arena_waits, or NULL), 0 when the arena records no wait times: 1 for
 * CLOCK_MONOTONIC; the CPU counter's, which is the process's own rate
 * (ticks_per_ns) when its clock is the counter too, else measured from the
 * start pair in pr (the counter and CLOCK_MONOTONIC are machine-wide). */
double live_wait_rate(const struct arena_waits *w, const struct arena_process *pr, int process_counter,
                      double ticks_per_ns);

#endif
