/*
 * Wrappers of the blocking calls that are not I/O: condition variables,
 * contended mutexes and rwlocks, semaphores, sleeps, poll/select/epoll,
 * wait/waitpid and pthread_join.  With HOOKIT_CAP_WAIT they time the real
 * call and deliver HOOKIT_EV_WAIT, so a profiler can tell the time a
 * thread spent waiting from the time it spent working (docs/io.md).
 *
 * They change nothing the program sees:
 *  - the real call runs with the program's arguments and its result and
 *    errno come back as they were (the event is delivered with errno saved);
 *  - nothing is held across the real call (no guard, no lock, no state of
 *    ours), so a cancellation point that acts (pthread_cond_wait, sem_wait,
 *    pthread_join, nanosleep, poll, ... are all cancellation points) unwinds
 *    through this frame as through any C frame, and a signal handler that
 *    longjmps out of a wait leaves nothing behind: such a call simply
 *    delivers no event;
 *  - EINTR is the real call's: we never restart.
 *
 * Calls that cannot block are passed through untimed, so the common cheap
 * cases cost one test: a mutex or rwlock taken at the first try (a trylock
 * first; only EBUSY goes on to the real lock), a semaphore with a count
 * (sem_trywait, after the cancellation test sem_wait makes whether or not
 * it blocks), poll/select/epoll with a zero timeout, waitpid(WNOHANG).
 */
#include "hookit/io_internal.h"
#include "hookit/profiler.h"

#include <dlfcn.h>

volatile int hk_wait_want;
/* The plugin's hookit_plugin.wait_begin, or NULL: called before the real
 * call by these wrappers and by the I/O wrappers (io_wait_token). */
uint64_t (*hk_wait_begin_fn)(void);
/* The plugin's direct entry point HookitWait (include/hookit/profiler.h),
 * called instead of building a WAIT event, or NULL. */
static void (*wait_hook)(const struct hookit_wait *w);

#ifdef HOOKIT_STATIC
#pragma weak HookitWait
#endif

HK_NOINSTR void hk_wait_configure(uint32_t caps, uint64_t (*begin)(void))
{
    hk_wait_begin_fn = begin;
#ifdef HOOKIT_STATIC
    wait_hook = HookitWait;
#else
    wait_hook = hk_plugin.handle ? (void (*)(const struct hookit_wait *))dlsym(hk_plugin.handle, "HookitWait")
                                 : NULL;
#endif
    hk_wait_want = (caps & HOOKIT_CAP_WAIT) != 0;
}

static inline int wait_tracking(void)
{
    return HK_UNLIKELY(hk_wait_want) && !hk_io_guard;
}

struct wait_call {
    uint64_t t0, token;
    int on;
};

static inline void wait_begin(struct wait_call *c)
{
    c->on = hk_collecting_now();
    if (!c->on)
        return;
    c->token = io_wait_token();
    c->t0 = io_clock();
}

/* After the real call: the event, with the guard held and errno kept. */
HK_NOINSTR __attribute__((noinline)) static void wait_end(const struct wait_call *c, const char *func,
                                                          int64_t result)
{
    if (!c->on)
        return;
    uint64_t t1 = io_clock();
    int saved = errno;
    IO_ENTER();
    struct hookit_wait w = { .func = func, .t0 = c->t0, .t1 = t1, .token = c->token, .result = result };
    if (wait_hook) {
        wait_hook(&w);
    } else if (hk_plugin.event) {
        struct hookit_event e = { .type = HOOKIT_EV_WAIT, .wait = &w };
        hk_plugin.event(&e);
    }
    IO_LEAVE();
    errno = saved;
}

/* The real call, timed when it may block. */
#define WAIT_TIMED(type, name, blocks, CALL)       \
    if (!wait_tracking() || !(blocks))             \
        return CALL;                               \
    struct wait_call c;                            \
    wait_begin(&c);                                \
    type res = CALL;                               \
    wait_end(&c, #name, (int64_t)res);             \
    return res;

/* A lock: TRY first (no clock when it is free); only EBUSY means it would
 * have blocked, every other answer is what the real lock answers too
 * (EDEADLK comes from the real lock, after the try's EBUSY). */
#define LOCK_TIMED(name, TRY, CALL)                \
    if (!wait_tracking())                          \
        return CALL;                               \
    int tried = TRY;                               \
    if (tried != EBUSY)                            \
        return tried;                              \
    struct wait_call c;                            \
    wait_begin(&c);                                \
    int res = CALL;                                \
    wait_end(&c, #name, res);                      \
    return res;

/* A semaphore: sem_wait acts on a pending cancellation even when it does
 * not block, so the test comes first; then a count taken at once is no
 * wait.  sem_trywait's EAGAIN is not the program's errno. */
#define SEM_TIMED(name, CALL)                      \
    if (!wait_tracking())                          \
        return CALL;                               \
    pthread_testcancel();                          \
    int saved = errno;                             \
    if (sem_trywait(sem) == 0)                     \
        return 0;                                  \
    errno = saved;                                 \
    struct wait_call c;                            \
    wait_begin(&c);                                \
    int res = CALL;                                \
    wait_end(&c, #name, res);                      \
    return res;

HK_NOINSTR static inline int ts_nonzero(const struct timespec *ts)
{
    return !ts || ts->tv_sec || ts->tv_nsec;
}

HK_NOINSTR static inline int tv_nonzero(const struct timeval *tv)
{
    return !tv || tv->tv_sec || tv->tv_usec;
}

/* ---- condition variables, mutexes, rwlocks, semaphores ---------------------------- */
HK_EXPORT HK_NOINSTR int LC_WRAPPER(pthread_cond_wait)(pthread_cond_t *cond, pthread_mutex_t *mutex)
{
    WAIT_TIMED(int, pthread_cond_wait, 1, IO_REAL(pthread_cond_wait)(cond, mutex))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(pthread_cond_timedwait)(pthread_cond_t *cond, pthread_mutex_t *mutex,
                                                            const struct timespec *abstime)
{
    WAIT_TIMED(int, pthread_cond_timedwait, 1, IO_REAL(pthread_cond_timedwait)(cond, mutex, abstime))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(pthread_cond_clockwait)(pthread_cond_t *cond, pthread_mutex_t *mutex,
                                                            clockid_t clock, const struct timespec *abstime)
{
    WAIT_TIMED(int, pthread_cond_clockwait, 1,
               IO_REAL(pthread_cond_clockwait)(cond, mutex, clock, abstime))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(pthread_mutex_lock)(pthread_mutex_t *m)
{
    LOCK_TIMED(pthread_mutex_lock, pthread_mutex_trylock(m), IO_REAL(pthread_mutex_lock)(m))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(pthread_mutex_timedlock)(pthread_mutex_t *m, const struct timespec *abstime)
{
    LOCK_TIMED(pthread_mutex_timedlock, pthread_mutex_trylock(m),
               IO_REAL(pthread_mutex_timedlock)(m, abstime))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(pthread_mutex_clocklock)(pthread_mutex_t *m, clockid_t clock,
                                                             const struct timespec *abstime)
{
    LOCK_TIMED(pthread_mutex_clocklock, pthread_mutex_trylock(m),
               IO_REAL(pthread_mutex_clocklock)(m, clock, abstime))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(pthread_rwlock_rdlock)(pthread_rwlock_t *l)
{
    LOCK_TIMED(pthread_rwlock_rdlock, pthread_rwlock_tryrdlock(l), IO_REAL(pthread_rwlock_rdlock)(l))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(pthread_rwlock_wrlock)(pthread_rwlock_t *l)
{
    LOCK_TIMED(pthread_rwlock_wrlock, pthread_rwlock_trywrlock(l), IO_REAL(pthread_rwlock_wrlock)(l))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(pthread_rwlock_timedrdlock)(pthread_rwlock_t *l,
                                                                const struct timespec *abstime)
{
    LOCK_TIMED(pthread_rwlock_timedrdlock, pthread_rwlock_tryrdlock(l),
               IO_REAL(pthread_rwlock_timedrdlock)(l, abstime))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(pthread_rwlock_timedwrlock)(pthread_rwlock_t *l,
                                                                const struct timespec *abstime)
{
    LOCK_TIMED(pthread_rwlock_timedwrlock, pthread_rwlock_trywrlock(l),
               IO_REAL(pthread_rwlock_timedwrlock)(l, abstime))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(sem_wait)(sem_t *sem)
{
    SEM_TIMED(sem_wait, IO_REAL(sem_wait)(sem))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(sem_timedwait)(sem_t *sem, const struct timespec *abstime)
{
    SEM_TIMED(sem_timedwait, IO_REAL(sem_timedwait)(sem, abstime))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(sem_clockwait)(sem_t *sem, clockid_t clock, const struct timespec *abstime)
{
    SEM_TIMED(sem_clockwait, IO_REAL(sem_clockwait)(sem, clock, abstime))
}

/* ---- sleeps ------------------------------------------------------------------------- */
HK_EXPORT HK_NOINSTR int LC_WRAPPER(nanosleep)(const struct timespec *req, struct timespec *rem)
{
    WAIT_TIMED(int, nanosleep, 1, IO_REAL(nanosleep)(req, rem))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(clock_nanosleep)(clockid_t clock, int flags, const struct timespec *req,
                                                     struct timespec *rem)
{
    WAIT_TIMED(int, clock_nanosleep, 1, IO_REAL(clock_nanosleep)(clock, flags, req, rem))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(usleep)(useconds_t usec)
{
    WAIT_TIMED(int, usleep, 1, IO_REAL(usleep)(usec))
}

HK_EXPORT HK_NOINSTR unsigned int LC_WRAPPER(sleep)(unsigned int seconds)
{
    WAIT_TIMED(unsigned int, sleep, 1, IO_REAL(sleep)(seconds))
}

/* ---- poll, select, epoll -------------------------------------------------------------- */
HK_EXPORT HK_NOINSTR int LC_WRAPPER(poll)(struct pollfd *fds, nfds_t nfds, int timeout)
{
    WAIT_TIMED(int, poll, timeout != 0, IO_REAL(poll)(fds, nfds, timeout))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(__poll_chk)(struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen)
{
    WAIT_TIMED(int, poll, timeout != 0, IO_REAL(__poll_chk)(fds, nfds, timeout, fdslen))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(ppoll)(struct pollfd *fds, nfds_t nfds, const struct timespec *tmo,
                                           const sigset_t *mask)
{
    WAIT_TIMED(int, ppoll, ts_nonzero(tmo), lc_ppoll(fds, nfds, tmo, mask))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(__ppoll_chk)(struct pollfd *fds, nfds_t nfds, const struct timespec *tmo,
                                                 const sigset_t *mask, size_t fdslen)
{
    /* glibc's own check first (it aborts as glibc would), then ppoll with
     * the mask the layer keeps (a client's sampling signal deliverable). */
    if (fdslen / sizeof *fds < nfds)
        return IO_REAL(__ppoll_chk)(fds, nfds, tmo, mask, fdslen);
    WAIT_TIMED(int, ppoll, ts_nonzero(tmo), lc_ppoll(fds, nfds, tmo, mask));
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(select)(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
    WAIT_TIMED(int, select, tv_nonzero(tv), IO_REAL(select)(nfds, r, w, e, tv))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(pselect)(int nfds, fd_set *r, fd_set *w, fd_set *e,
                                             const struct timespec *ts, const sigset_t *mask)
{
    WAIT_TIMED(int, pselect, ts_nonzero(ts), lc_pselect(nfds, r, w, e, ts, mask))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(epoll_wait)(int epfd, struct epoll_event *ev, int max, int timeout)
{
    WAIT_TIMED(int, epoll_wait, timeout != 0, IO_REAL(epoll_wait)(epfd, ev, max, timeout))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(epoll_pwait)(int epfd, struct epoll_event *ev, int max, int timeout,
                                                 const sigset_t *mask)
{
    WAIT_TIMED(int, epoll_pwait, timeout != 0, lc_epoll_pwait(epfd, ev, max, timeout, mask))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(epoll_pwait2)(int epfd, struct epoll_event *ev, int max,
                                                  const struct timespec *tmo, const sigset_t *mask)
{
    WAIT_TIMED(int, epoll_pwait2, ts_nonzero(tmo), lc_epoll_pwait2(epfd, ev, max, tmo, mask));
}

/* ---- child processes and threads ---------------------------------------------------- */
HK_EXPORT HK_NOINSTR pid_t LC_WRAPPER(wait)(int *status)
{
    WAIT_TIMED(pid_t, wait, 1, IO_REAL(wait)(status))
}

HK_EXPORT HK_NOINSTR pid_t LC_WRAPPER(waitpid)(pid_t pid, int *status, int options)
{
    WAIT_TIMED(pid_t, waitpid, !(options & WNOHANG), IO_REAL(waitpid)(pid, status, options))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(waitid)(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
    WAIT_TIMED(int, waitid, !(options & WNOHANG), IO_REAL(waitid)(idtype, id, info, options))
}

HK_EXPORT HK_NOINSTR pid_t LC_WRAPPER(wait3)(int *status, int options, struct rusage *usage)
{
    WAIT_TIMED(pid_t, wait3, !(options & WNOHANG), IO_REAL(wait3)(status, options, usage))
}

HK_EXPORT HK_NOINSTR pid_t LC_WRAPPER(wait4)(pid_t pid, int *status, int options, struct rusage *usage)
{
    WAIT_TIMED(pid_t, wait4, !(options & WNOHANG), IO_REAL(wait4)(pid, status, options, usage))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(pthread_join)(pthread_t thread, void **ret)
{
    WAIT_TIMED(int, pthread_join, 1, IO_REAL(pthread_join)(thread, ret))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(pthread_timedjoin_np)(pthread_t thread, void **ret,
                                                          const struct timespec *abstime)
{
    WAIT_TIMED(int, pthread_timedjoin_np, 1, IO_REAL(pthread_timedjoin_np)(thread, ret, abstime))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(pthread_clockjoin_np)(pthread_t thread, void **ret, clockid_t clock,
                                                          const struct timespec *abstime)
{
    WAIT_TIMED(int, pthread_clockjoin_np, 1,
               IO_REAL(pthread_clockjoin_np)(thread, ret, clock, abstime))
}
