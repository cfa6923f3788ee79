/* Time spent waiting, apart from time spent working (wait.c). */
#ifndef JPROF_WAIT_H
#define JPROF_WAIT_H

#include "profiler/jprof/jprof.h"
#include "profiler/jprof/live/attend.h"

/* docs/io.md, "Wait time".
 * JPROFOPTS wait, nowait, cpu; HOOKIT_CAP_WAIT when wanted; the plugin's
 * wait_begin and HOOKIT_EV_WAIT; jp_attend's ARENA_REQ_WAIT; build.c's
 * wait_ns, wait_calls and cpu_ns columns. */
int jp_opt_wait(const char *value);
int jp_opt_nowait(const char *value);
int jp_opt_cpu(const char *value);
uint32_t jp_wait_start(const struct hookit_host *host);
uint64_t jp_wait_begin(void);
void jp_wait_event(const struct hookit_wait *w);
uint64_t jp_wait_net(struct jp_thread *t, uint64_t token, uint64_t t0, uint64_t t1);
void jp_wait_exit(struct jp_thread *t);
void jp_wait_jump(struct jp_thread *t, uint32_t depth, uint64_t now);
void jp_wait_thread_end(struct jp_thread *t, uint64_t now);
/* Busy held, by t's own thread: a reset or zerobase as of `at` was applied
 * to its tree; the wait in progress, if any, now starts there. */
void jp_wait_cut(struct jp_thread *t, uint64_t at);
/* dt (I/O clock ticks) of a blocking call that began at t0 (I/O clock),
 * less its part before the last reset or zerobase of t's tree. */
uint64_t jp_wait_cut_part(const struct jp_thread *t, uint64_t t0, uint64_t dt);
/* A blocking call (a wait, or an I/O call) that just returned, t0 to t1
 * (I/O clock), token from jp_wait_begin: its time in I/O clock ticks, the
 * one rule for both.  A reset or zerobase given while the call blocked is
 * applied first (the call goes to the tree after it), and the call counts
 * only its time from that moment on; a signal handler's time during it is
 * the handler's frames' own (jp_wait_net).  Inline for the I/O path:
 * nearly every call began after the last reset, and has nothing pending. */
static inline uint64_t jp_blocking_ticks(struct jp_thread *t, uint64_t token, uint64_t t0, uint64_t t1)
{
    if (t && JP_UNLIKELY(jp_pending(t->rec)))
        jp_pending_settle(t);
    uint64_t dt = jp_wait_net(t, token, t0, t1);
    if (JP_LIKELY(!t || (t->wait.cut <= t0 && !jp_pending(t->rec))))
        return dt;
    return jp_wait_cut_part(t, t0, dt);
}
struct profile;
struct prof_thread;
/* th's wait columns; t: the thread's live state when it still runs (its
 * wait in progress is counted up to now), else NULL. */
int jp_wait_thread(struct profile *p, struct prof_thread *th, const struct arena_copy_node *nodes, uint32_t n,
                   const struct jp_thread *t, uint64_t now);

#endif
