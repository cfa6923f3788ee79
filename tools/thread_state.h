/*
 * A running thread as the kernel sees it, for `hookit top`: its scheduler
 * state (the third field of /proc/PID/task/TID/stat: R running, S
 * sleeping, D in an uninterruptible wait, T stopped, ...) and the CPU time
 * it has used (utime + stime), so top can say whether a thread works or
 * waits rather than "running" for every thread that has not ended.
 */
#ifndef HOOKIT_TOOLS_THREAD_STATE_H
#define HOOKIT_TOOLS_THREAD_STATE_H

#include <stdint.h>
#include <sys/types.h>

struct thread_state {
    char kernel;     /* R, S, D, T, t, Z, X, I ... ('?' when unknown) */
    uint64_t cpu_ns; /* CPU time used so far (user + system) */
};

/* 0, or -1 when the thread is gone (state '?', cpu 0). */
int thread_state_read(pid_t pid, pid_t tid, struct thread_state *s);
/* "running", "sleeping", ... for a state letter. */
const char *thread_state_name(char kernel);

#endif
