/* The requests a thread carries out itself (control.c): requests from
 * outside the process are carried out by the profiled program's own
 * threads at their next hook, I/O, wait or flow event, so no thread is
 * ever stopped from outside.  The one header a folder below live/ may
 * include: the hot path (tree/) and the metrics' I/O and wait paths call
 * down here to apply what a reader asked for before their tree changes. */
#ifndef JPROF_LIVE_ATTEND_H
#define JPROF_LIVE_ATTEND_H

#include "profiler/jprof/jprof.h"

/* Called at a hook exit, outside the busy section, when rec->request is set
 * (ARENA_REQ_* in profile/arena.h), and for HOOKIT_EV_CONTROL. */
void jp_attend(struct jp_thread *t);
/* Apply a pending reset or zerobase (jp_pending), busy held, as of its
 * moment. */
void jp_pending_apply(struct jp_thread *t);
/* The same outside a hook (an I/O, wait or flow event before the thread's
 * next hook): takes busy, does nothing when the thread is inside one. */
void jp_pending_settle(struct jp_thread *t);

#endif
