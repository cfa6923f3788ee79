/*
 * One source, two variants.
 *
 * Dynamic (libhookit.so): a wrapper is the libc function's own name (it
 * interposes, linked or preloaded) and the real function is a pointer
 * resolved once with dlsym(RTLD_NEXT) by lc_resolve_reals(), never later
 * (not from a signal handler, not under an allocator lock).
 *
 * Static (libhookit.a, -DHOOKIT_STATIC, `hookit link`): a wrapper is
 * __wrap_NAME and the real function is __real_NAME, both made by
 * `ld --wrap=NAME`.
 *
 *   LC_WRAPPER(fork)   the name to define
 *   REAL(fork)         the callable real function
 */
#ifndef HOOKIT_LIFECYCLE_REAL_H
#define HOOKIT_LIFECYCLE_REAL_H

#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <stdlib.h>
#include <unistd.h>

#include "lifecycle/wrapped.h"

/* Every libc function the layer wraps and must be able to call for real
 * (a table, one group a line, as lifecycle/wrapped.h's: not reflowed). */
/* clang-format off */
#define LC_REAL_FUNCS(X) \
    X(exit) X(_exit) X(_Exit) X(quick_exit) \
    X(fork) \
    X(execve) X(execvpe) X(fexecve) \
    X(posix_spawn) X(posix_spawnp) X(system) \
    X(pthread_create) X(pthread_exit) \
    X(sigaction) X(sigprocmask) X(pthread_sigmask) \
    X(sigsuspend) X(pselect) X(ppoll) X(epoll_pwait) X(epoll_pwait2) \
    X(setuid) X(seteuid) X(setreuid) X(setresuid) \
    X(dlopen) X(dlclose)
/* clang-format on */

/* What the layer defines or wraps that glibc's headers leave undeclared:
 * bsd_signal (old X/Open levels only) and __sigaction (glibc's own name
 * for sigaction, which some programs call). */
extern __typeof__(signal) bsd_signal;
extern __typeof__(sigaction) __sigaction;

#define LC_API __attribute__((visibility("default")))

#ifdef HOOKIT_STATIC

#define LC_WRAPPER(name) __wrap_##name
/* __real_NAME is a weak reference: libhookit.a also links without --wrap
 * (its wrappers then stay unused) and the plain function is the real one.
 * With --wrap=NAME, `hookit link` adds -u NAME so that libc.a's member is
 * extracted and __real_NAME is set. */
#define REAL(name) (__real_##name ? __real_##name : name)
#define LC_DECLARE_REAL(name) extern __typeof__(name) __real_##name __attribute__((weak));
LC_REAL_FUNCS(LC_DECLARE_REAL)
#undef LC_DECLARE_REAL
/* The wrappers themselves, which only ld --wrap refers to: declared from
 * the real function's type, so each definition is checked against it. */
#define LC_DECLARE_WRAP(name) extern __typeof__(name) __wrap_##name;
/* sigset, sigignore and siginterrupt are deprecated, and still wrapped:
 * programs call them. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
LC_WRAPPED_PROCESS(LC_DECLARE_WRAP)
LC_WRAPPED_DYNAMIC(LC_DECLARE_WRAP)
#pragma GCC diagnostic pop
#undef LC_DECLARE_WRAP

#else

#define LC_WRAPPER(name) name
#define REAL(name) (lc_real.name)
#define LC_REAL_MEMBER(name) __typeof__(name) *name;
struct lc_real_table {
    LC_REAL_FUNCS(LC_REAL_MEMBER)
};
#undef LC_REAL_MEMBER
extern struct lc_real_table lc_real;

#endif

/* Resolve every real function (dynamic variant; a no-op when static).
 * Called once, early, from lc_ensure_init(). */
void lc_resolve_reals(void);

/* The waits that set a signal mask of their own, as the layer runs them
 * (signal_wait.c: a client's sampling signal stays deliverable).  The
 * names themselves are exported by libhookit's wait timing (hookit/
 * io_wait.c), which calls these as their real functions. */
int lc_pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, const struct timespec *timeout,
               const sigset_t *mask);
int lc_ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
             const sigset_t *mask);
int lc_epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout,
                   const sigset_t *mask);
int lc_epoll_pwait2(int epfd, struct epoll_event *events, int maxevents, const struct timespec *timeout,
                    const sigset_t *mask);

#endif
