/*
 * exit, _exit, _Exit, quick_exit: the process ends normally.  fini_process
 * runs before the real function, so atexit handlers run after it (as with
 * libmonitor); an exit re-entered from an atexit handler goes straight to
 * the real exit.  A thread calling exit while another one ends the process
 * waits for that one's exit (_exit & co end it at once, after the fini).  _exit & co give monitor_fini_library (no
 * destructor runs).  Exits taken inside libc (err, error, the last thread after
 * pthread_exit in main) are caught by main.c's destructor.
 */
#include "lifecycle/internal.h"

LC_API void LC_WRAPPER(exit)(int status)
{
    lc_exit_gate();
    REAL(exit)(status);
    __builtin_unreachable();
}

LC_API void LC_WRAPPER(_exit)(int status)
{
    lc_exit_normal();       /* not parked: it ends the process at once, as without us */
    lc_fini_library();      /* no destructors run after this one */
    REAL(_exit)(status);
    __builtin_unreachable();
}

LC_API void LC_WRAPPER(_Exit)(int status)
{
    lc_exit_normal();       /* not parked: it ends the process at once, as without us */
    lc_fini_library();      /* no destructors run after this one */
    REAL(_Exit)(status);
    __builtin_unreachable();
}

LC_API void LC_WRAPPER(quick_exit)(int status)
{
    lc_exit_normal();       /* not parked: it ends the process at once, as without us */
    lc_fini_library();      /* no destructors run after this one */
    REAL(quick_exit)(status);
    __builtin_unreachable();
}

/* As libmonitor: the real _exit, bypassing every fini callback. */
LC_API void monitor_real_exit(int status)
{
    lc_ensure_init();
    REAL(_exit)(status);
    __builtin_unreachable();
}
