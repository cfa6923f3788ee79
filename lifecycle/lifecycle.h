/*
 * The lifecycle layer's internal client interface.
 *
 * lifecycle/ keeps control of the process (start, exit, threads, fork, exec,
 * signals, dlopen, MPI) and reports what happens to two kinds of client:
 *   - a user's libmonitor-style client, through the monitor_* callbacks of
 *     include/monitor.h (weak defaults, overridden by the client);
 *   - libhookit itself, through the struct below, registered with
 *     lifecycle_register() from libhookit's constructor.  This keeps hookit's
 *     profiler out of the monitor_* symbols so both receive every event.
 *
 * lifecycle/ depends on libc only.  Each callback may be NULL.  Callbacks
 * run in the thread the event concerns (thread start/end inside that thread,
 * fork child in the child).
 *
 * Ordering (docs/lifecycle.md): init_process/init_thread run before the
 * user's monitor_init_*, fini_* after the user's monitor_fini_*.
 * fini_thread runs inside every ending thread, the main thread included
 * when another thread ends the process (so every tree is closed inside its
 * own thread), and possibly in a signal handler (exit shootdown, death by a
 * signal).  Exec gives pre_exec (then exec_failed if it returns), not
 * fini_process.  Up to four clients may register.
 */
#ifndef HOOKIT_LIFECYCLE_H
#define HOOKIT_LIFECYCLE_H

#include <sys/types.h>

/* How a process ends (same values as MONITOR_EXIT_*). */
enum lc_end_how {
    LC_EXIT_NORMAL = 1,
    LC_EXIT_SIGNAL = 2,
    LC_EXIT_EXEC = 3,
};

struct lc_client {
    void (*init_process)(void);             /* before main (or at first control) */
    void (*fini_process)(int how, int signo);/* once; after every fini_thread */
    void (*init_thread)(void);              /* inside the new thread */
    void (*fini_thread)(void);              /* inside the ending thread */
    void (*pre_fork)(void);
    void (*post_fork_parent)(void);
    void (*post_fork_child)(void);          /* only the forking thread survives */
    void (*pre_exec)(void);                 /* the image is about to be replaced */
    void (*exec_failed)(void);              /* exec returned: carry on */
    void (*post_dlopen)(const char *path, void *handle);
    void (*post_dlclose)(void *handle);
    void (*mpi_rank)(int rank, int size);
    /* Added after the first version (may be NULL): dlclose is about to
     * unmap handle's library; its code can still be read and resolved. */
    void (*pre_dlclose)(void *handle);
    /* Added (may be NULL): just before (done = 0) and just after (done = 1)
     * the real MPI_Init, MPI_Init_thread or MPI_Finalize; name is the entry
     * point the program called ("MPI_Init", "PMPI_Finalize", "mpi_init_",
     * "MPI_INIT_THREAD", ...). */
    void (*mpi_call)(const char *name, int done);
    /* Added (may be NULL): the effective user is about to change to euid
     * (setuid, seteuid, setreuid, setresuid), while the process still has
     * its present rights.  The call may yet fail. */
    void (*pre_set_user)(uid_t euid);
};

/* Register libhookit's client.  Safe to call before the layer is started. */
void lifecycle_register(const struct lc_client *client);

/* Give libhookit's handler the signal first, ahead of a libmonitor client's
 * and the application's; it returns 0 when it consumed the signal.  The
 * application's view of the disposition does not change.  0 or -1. */
#include <signal.h>
int lifecycle_signal_first(int sig, int (*handler)(int, siginfo_t *, void *));

/* Start a thread of hookit's own (the profiler's control thread; at most
 * one), with every signal the application could be sent blocked in it:
 * made with the real pthread_create, so no client sees it (no init_thread,
 * no thread number, not in the exit shootdown) and no signal meant for the
 * program is delivered to it.  When the program's last thread ends (main
 * having called pthread_exit), stop() is called and the thread joined, so
 * that the process still ends with the program's last thread; stop() must
 * make fn return.  Not inherited by a fork child.  0 or an error number. */
int lifecycle_own_thread(void *(*fn)(void *), void *arg, void (*stop)(void));

#endif
