/*
 * Waits that set a signal mask of their own for their duration: sigsuspend,
 * pselect, ppoll (and __ppoll_chk, through it), epoll_pwait, epoll_pwait2.  As sigprocmask does (signal.c), the kernel
 * gets the application's mask without the signals the layer keeps
 * deliverable (a client's monitor_sigaction signals, libhookit's sampling
 * signal, the shootdown), so a sampler still sees a program that waits with
 * every signal blocked.  When only such a signal interrupted the wait (the
 * program would not have seen it), the wait goes on with the time left
 * instead of returning an EINTR the program would not otherwise get; see
 * lc_signal_wait_begin for how that is known.  errno is as the
 * program would have found it.
 */
#include "lifecycle/internal.h"

#include <time.h>

/* What is left of a relative timeout that started at *start (NULL: none). */
static const struct timespec *lc_time_left(const struct timespec *timeout, const struct timespec *start,
                                           struct timespec *left)
{
    if (!timeout)
        return NULL;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long ns = (timeout->tv_sec - (now.tv_sec - start->tv_sec)) * 1000000000LL +
                   (timeout->tv_nsec - (now.tv_nsec - start->tv_nsec));
    if (ns < 0)
        ns = 0;
    left->tv_sec = (time_t)(ns / 1000000000LL);
    left->tv_nsec = (long)(ns % 1000000000LL);
    return left;
}

/* The same, for a timeout in milliseconds (-1: none). */
static int lc_ms_left(int timeout, const struct timespec *start)
{
    if (timeout < 0)
        return timeout;
    struct timespec ms = { timeout / 1000, (long)(timeout % 1000) * 1000000L }, left;
    lc_time_left(&ms, start, &left);
    return (int)(left.tv_sec * 1000 + (left.tv_nsec + 999999) / 1000000);
}

/* After a wait returned r: go on waiting?  (errno put back if so.) */
static int lc_wait_again(int r, struct lc_wait *w, int saved_errno)
{
    int e = errno;
    lc_signal_wait_end(w);
    errno = e;
    if (r < 0 && errno == EINTR && lc_signal_wait_resume(w)) {
        errno = saved_errno;
        return 1;
    }
    return 0;
}

LC_API int LC_WRAPPER(sigsuspend)(const sigset_t *mask)
{
    int saved = errno, r;
    struct lc_wait w;
    sigset_t kernel;
    do
        r = REAL(sigsuspend)(lc_signal_wait_begin(mask, &kernel, &w));
    while (lc_wait_again(r, &w, saved));
    return r;
}

int lc_pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
                               const struct timespec *timeout, const sigset_t *mask)
{
    if (!mask)
        return REAL(pselect)(nfds, rd, wr, ex, timeout, mask);
    int saved = errno, r;
    struct lc_wait w;
    struct timespec start, left;
    sigset_t kernel;
    clock_gettime(CLOCK_MONOTONIC, &start);
    /* On EINTR the kernel leaves the sets as they were given. */
    do
        r = REAL(pselect)(nfds, rd, wr, ex, lc_time_left(timeout, &start, &left),
                          lc_signal_wait_begin(mask, &kernel, &w));
    while (lc_wait_again(r, &w, saved));
    return r;
}

int lc_ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
                             const sigset_t *mask)
{
    if (!mask)
        return REAL(ppoll)(fds, nfds, timeout, mask);
    int saved = errno, r;
    struct lc_wait w;
    struct timespec start, left;
    sigset_t kernel;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do
        r = REAL(ppoll)(fds, nfds, lc_time_left(timeout, &start, &left),
                        lc_signal_wait_begin(mask, &kernel, &w));
    while (lc_wait_again(r, &w, saved));
    return r;
}

int lc_epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout,
                                   const sigset_t *mask)
{
    if (!mask)
        return REAL(epoll_pwait)(epfd, events, maxevents, timeout, mask);
    int saved = errno, r;
    struct lc_wait w;
    struct timespec start;
    sigset_t kernel;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do
        r = REAL(epoll_pwait)(epfd, events, maxevents, lc_ms_left(timeout, &start),
                              lc_signal_wait_begin(mask, &kernel, &w));
    while (lc_wait_again(r, &w, saved));
    return r;
}

/* As epoll_pwait, with a timespec timeout (NULL: none) as ppoll's. */
int lc_epoll_pwait2(int epfd, struct epoll_event *events, int maxevents, const struct timespec *timeout,
                    const sigset_t *mask)
{
    if (!mask)
        return REAL(epoll_pwait2)(epfd, events, maxevents, timeout, mask);
    int saved = errno, r;
    struct lc_wait w;
    struct timespec start, left;
    sigset_t kernel;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do
        r = REAL(epoll_pwait2)(epfd, events, maxevents, lc_time_left(timeout, &start, &left),
                               lc_signal_wait_begin(mask, &kernel, &w));
    while (lc_wait_again(r, &w, saved));
    return r;
}
