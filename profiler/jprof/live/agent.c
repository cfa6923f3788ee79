/* The control thread: carries out `hookit ctl` commands (control.c) when
 * every thread of the program is blocked (an nginx master in sigsuspend,
 * main in pthread_join, a daemon in read) and so runs no hook that could.
 *
 * It waits on the arena header's attention word with a futex (the word is
 * in a shared file mapping, so the reader's FUTEX_WAKE from another process
 * reaches it) and claims the command like any hook would, but only when no
 * thread of the program took it within GRACE_NS: a running program carries
 * its commands out at a hook exit, in its own flow, as without this thread
 * (reset and zerobase then take the program's numbers between two of its
 * calls, never while one of its I/O calls is being counted).  Nothing is
 * asked of the program's threads: no signal, no EINTR, no change of their
 * masks or dispositions.
 *
 * Invisible to the program: made by the lifecycle layer's real
 * pthread_create (no libmonitor callback, no thread number), every signal
 * blocked in it (a signal meant for the program never lands here), its
 * hooks ignored (jp_self is JP_QUIET: a flush may run the program's own
 * instrumented malloc) and its I/O not counted.  Only a process with a
 * live view (a registry file a reader can open) gets one; a fork child
 * starts its own, the parent's does not survive the fork.  It ends before
 * the final profile is written.
 *
 * It is made only once the program has a thread of its own (by default):
 * glibc runs a single-threaded process on fast paths (malloc and free
 * without the arena lock and atomics, stdio without its locks) that its
 * first pthread_create turns off for good.  A thread of ours in a
 * single-threaded program would make the program slower where it
 * allocates or prints, and put that time in the program's profile: Lua's
 * allocator went from 10% of the uninstrumented run's time to 14-16% of
 * hookit's (docs/performance.md).  JPROFOPTS=control makes it at start
 * (a single-threaded program that blocks, such as an nginx master, is
 * then reachable); nocontrol never. */
#include "profiler/jprof/jprof.h"
#include "live.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/single_threaded.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* How long a command waits for a program thread before this one takes it. */
#define GRACE_NS 10000000L

static volatile uint32_t agent_quit;
static volatile uint32_t agent_running; /* 1 from start to the end of its loop */

JP_NOINSTR static void wake(volatile uint32_t *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

JP_NOINSTR static void *agent_main(void *arg)
{
    (void)arg;
    jp_self = JP_QUIET;
    if (jp_host->io_quiet)
        jp_host->io_quiet(1);
    prctl(PR_SET_NAME, "hookit-control", 0, 0, 0);
    struct arena_header *h = jp_arena_header();
    while (!__atomic_load_n(&agent_quit, __ATOMIC_ACQUIRE)) {
        uint32_t a = __atomic_load_n(&h->attention, __ATOMIC_ACQUIRE);
        if (a == 1) {
            /* The program's threads first (nothing wakes us early: the word
             * moves on without a wake when one of them claims it). */
            struct timespec grace = { 0, GRACE_NS };
            syscall(SYS_futex, &h->attention, FUTEX_WAIT, 1, &grace, NULL, 0);
            if (!__atomic_load_n(&agent_quit, __ATOMIC_ACQUIRE))
                jp_control_take(NULL); /* claims it only if still waiting */
            continue;
        }
        /* Shared futex: the reader is another process.  EINTR (glibc's
         * setuid broadcast), EAGAIN (the word moved): look again. */
        syscall(SYS_futex, &h->attention, FUTEX_WAIT, a, NULL, NULL, 0);
    }
    __atomic_store_n(&agent_running, 0, __ATOMIC_RELEASE);
    wake(&agent_running);
    return NULL;
}

/* The program's last thread ends (libhookit joins us after this). */
JP_NOINSTR static void agent_quit_now(void)
{
    __atomic_store_n(&agent_quit, 1, __ATOMIC_RELEASE);
    wake(&jp_arena_header()->attention);
}

/* pthread_create may call malloc (the new thread's TLS), which may be the
 * program's own instrumented one: those hooks are ours, not the program's. */
static uint32_t agent_spawned; /* once per process image (a fork child starts again) */

JP_NOINSTR static void spawn(void)
{
    if (jp_opt.control_thread == JP_CONTROL_NEVER || !jp_arena_live() || !HOOKIT_HOST_HAS(jp_host, own_thread)
        || !jp_host->own_thread || __atomic_exchange_n(&agent_spawned, 1, __ATOMIC_ACQ_REL))
        return;
    int saved = errno;
    struct jp_thread *self = jp_self;
    jp_self = JP_QUIET;
    agent_quit = 0;
    __atomic_store_n(&agent_running, 1, __ATOMIC_RELEASE);
    int rc = jp_host->own_thread(agent_main, NULL, agent_quit_now);
    if (rc != 0) {
        __atomic_store_n(&agent_running, 0, __ATOMIC_RELEASE);
        jp_host->debug_log("jprof: no control thread (error %d): a process whose threads all "
                           "block cannot be controlled",
                           rc);
    }
    jp_self = self;
    errno = saved;
}

/* Now, unless that would make a single-threaded program multi-threaded
 * for glibc (see the file comment). */
JP_NOINSTR static void spawn_if_threaded(void)
{
    if (jp_opt.control_thread == JP_CONTROL_ALWAYS || !__libc_single_threaded)
        spawn();
}

JP_NOINSTR void jp_agent_start(void)
{
    spawn_if_threaded();
}

/* A thread of the program started: glibc has left its single-threaded
 * paths, a thread of ours costs the program nothing more. */
JP_NOINSTR void jp_agent_program_thread(void)
{
    if (!__atomic_load_n(&agent_spawned, __ATOMIC_RELAXED))
        spawn();
}

/* Only the forking thread is in the child: the parent's control thread is
 * not (glibc keeps the child on its multi-threaded paths when the parent
 * had threads; then so do we). */
JP_NOINSTR void jp_agent_fork_child(void)
{
    agent_running = 0;
    agent_spawned = 0;
    spawn_if_threaded();
}

/* Before the final profile: the thread leaves its loop (a command it is
 * carrying out is finished first; a flush holds the writer's lock the
 * final profile then waits for).  Waits at most 1 s for it, not at all
 * when the process is dying by a signal. */
JP_NOINSTR void jp_agent_stop(int wait)
{
    if (!__atomic_load_n(&agent_running, __ATOMIC_ACQUIRE))
        return;
    int saved = errno;
    agent_quit_now();
    struct timespec ts = { 1, 0 };
    if (wait && __atomic_load_n(&agent_running, __ATOMIC_ACQUIRE))
        syscall(SYS_futex, &agent_running, FUTEX_WAIT, 1, &ts, NULL, 0);
    errno = saved;
}
