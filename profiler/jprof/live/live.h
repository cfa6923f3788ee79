/* Requests from live readers and `hookit ctl` (control.c), and the control
 * thread that serves them while every program thread is blocked (agent.c);
 * what a thread carries out itself is in attend.h. */
#ifndef JPROF_LIVE_H
#define JPROF_LIVE_H

#include "profiler/jprof/jprof.h"
#include "attend.h"

/* Claim the command waiting in the arena header, if any, carry it out and
 * acknowledge it; t is the calling thread's state, NULL for the control
 * thread (control.c). */
void jp_control_take(struct jp_thread *t);
/* An ARENA_CMD_* carried out by the calling thread (HOOKIT_EV_RESET/ZEROBASE). */
void jp_control_local(uint32_t cmd);
/* The control thread (agent.c): serves commands while every program thread
 * is blocked.  Started with the process, again in a fork child that has a
 * live view; stopped before the final profile. */
void jp_agent_start(void);
void jp_agent_program_thread(void);
void jp_agent_fork_child(void);
void jp_agent_stop(int wait);
/* The MPI job this process is a rank of, in its arena for live readers
 * (job_mark.c; a fork child's arena has it cleared, base/arena.c). */
void jp_job_mark(int rank, int size);

#endif
