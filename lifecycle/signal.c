/*
 * Signals.  The application keeps its exact view of every disposition
 * (sigaction, signal, sysv_signal, bsd_signal, sigset, siginterrupt... all
 * report and change that view), while the layer:
 *   - catches death by a signal whose disposition is the default (SIGSEGV
 *     fault, SIGTERM, SIGABRT, ...): our handler runs fini_process(how=
 *     signal), restores the default, unblocks and re-raises, so the process
 *     dies by the same signal with the same status (a fault re-executes the
 *     faulting instruction instead, keeping its siginfo for the core);
 *   - gives a client's monitor_sigaction handler the signal first;
 *   - emulates SA_RESETHAND (so a crash handler that re-raises still gets
 *     the fini);
 *   - keeps its shootdown signal and the signals a client holds through
 *     monitor_sigaction deliverable (removed from masks the application
 *     sets, while sigprocmask/pthread_sigmask report the mask it set; the
 *     shootdown signal also from the sets it sigwait()s for).
 * Otherwise an application's handler or SIG_IGN goes to the kernel as is,
 * so SA_RESTART, SA_ONSTACK, SA_SIGINFO, SA_NOCLDWAIT, the ucontext,
 * SIG_IGN across exec and SIGCHLD auto-reaping are the kernel's own.
 */
#include "lifecycle/internal.h"

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#if !defined(SA_RESTORER) && defined(__x86_64__)
#define SA_RESTORER 0x04000000      /* libc sets it on every sigaction */
#endif

struct lc_sigstate {
    struct sigaction app;           /* what the application believes */
    monitor_sighandler_t *internal; /* libhookit's own (lifecycle_signal_first) */
    monitor_sighandler_t *client;   /* monitor_sigaction's handler */
    sigset_t client_mask;
    int client_flags;
    int ours;                       /* the kernel holds lc_signal_entry */
    int waiting;                    /* threads in a wait that route the app's handler through
                                     * lc_signal_entry (lc_signal_wait_begin) */
};

static struct lc_sigstate lc_sig[_NSIG];
static lc_spinlock lc_sig_lock = LC_SPINLOCK_INIT;
static sigset_t lc_sigintr;         /* siginterrupt(sig, 1) for signal() */
#ifdef SA_RESTORER
static void *lc_restorer;           /* libc's sa_restorer, for the app's view */
#endif
/* Signals kept deliverable whatever mask the application sets: the
 * shootdown signal and the client's monitor_sigaction signals. */
static sigset_t lc_keep_open;
/* Those of them the application believes this thread blocks. */
static LC_TLS sigset_t lc_hidden;
/* Signals handled on this thread by lc_signal_entry: those that ran an
 * application handler, and the others (consumed by libhookit or a client,
 * ignored, the shootdown).  A wait that only the others interrupted is
 * resumed (lc_signal_wait_begin). */
static LC_TLS volatile unsigned long lc_sig_visible, lc_sig_invisible;

static void lc_signal_entry(int sig, siginfo_t *info, void *context);

/* Signals the layer may take over (not SIGKILL/SIGSTOP, not libc's own). */
static int lc_sig_manageable(int sig)
{
    return sig > 0 && sig < _NSIG && sig != SIGKILL && sig != SIGSTOP &&
           !(sig >= 32 && sig < SIGRTMIN);
}

/* Default action: terminate (with or without core). */
static int lc_sig_fatal(int sig)
{
    switch (sig) {
    case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
    case SIGTSTP: case SIGTTIN: case SIGTTOU: case SIGSTOP:
        return 0;
    default:
        return 1;
    }
}

static int lc_sig_stops(int sig)
{
    return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static int lc_is_handler(const struct sigaction *a)
{
    return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN;
}

/* Put into the kernel what the application's view and the client need.
 * Called with lc_sig_lock held. */
static void lc_sig_install(int sig)
{
    struct lc_sigstate *s = &lc_sig[sig];
    const struct sigaction *app = &s->app;
    int handler = lc_is_handler(app);
    int dfl = app->sa_handler == SIG_DFL;
    int ours = sig == lc_shootdown_signo || s->client || s->internal ||
               (handler && ((app->sa_flags & SA_RESETHAND) || s->waiting)) ||
               (dfl && lc_sig_fatal(sig));
    struct sigaction k;
    if (!ours) {
        k = *app;
    } else {
        memset(&k, 0, sizeof k);
        k.sa_sigaction = lc_signal_entry;
        const int kept = SA_ONSTACK | SA_RESTART | SA_NODEFER | SA_NOCLDSTOP | SA_NOCLDWAIT;
        if (handler) {
            k.sa_mask = app->sa_mask;
            k.sa_flags = (app->sa_flags & kept) | SA_SIGINFO;
            if (s->client)
                sigorset(&k.sa_mask, &k.sa_mask, &s->client_mask);
        } else if (s->client) {
            k.sa_mask = s->client_mask;
            k.sa_flags = (s->client_flags & kept) | (app->sa_flags & (SA_NOCLDSTOP | SA_NOCLDWAIT)) |
                         SA_SIGINFO;
        } else {
            sigemptyset(&k.sa_mask);
            k.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        }
        /* SIGCHLD=SIG_IGN means "reap my children": keep that. */
        if (sig == SIGCHLD && app->sa_handler == SIG_IGN)
            k.sa_flags |= SA_NOCLDWAIT;
    }
    s->ours = ours;
    REAL(sigaction)(sig, &k, NULL);
}

void lc_signal_init(void)
{
    lc_shootdown_signo = SIGRTMIN + 8;
    sigemptyset(&lc_sigintr);
    sigemptyset(&lc_keep_open);
    sigaddset(&lc_keep_open, lc_shootdown_signo);
    sigset_t saved;
    lc_lock(&lc_sig_lock, &saved);
    for (int sig = 1; sig < _NSIG; sig++)
        if (lc_sig_manageable(sig)) {
            REAL(sigaction)(sig, NULL, &lc_sig[sig].app);
            lc_sig_install(sig);
        }
    struct sigaction probe;
    REAL(sigaction)(SIGSEGV, NULL, &probe);
#ifdef SA_RESTORER
    lc_restorer = (void *)probe.sa_restorer;
#endif
    lc_unlock(&lc_sig_lock, &saved);
}

/* ---- the application's view -------------------------------------------------------- */
static int lc_set_action(int sig, const struct sigaction *act, struct sigaction *old)
{
    lc_ensure_init();
    if (!lc_sig_manageable(sig))
        return REAL(sigaction)(sig, act, old);
    sigset_t saved;
    lc_lock(&lc_sig_lock, &saved);
    struct sigaction prev = lc_sig[sig].app;
    if (act) {
        lc_sig[sig].app = *act;
#ifdef SA_RESTORER
        /* what libc's sigaction would have made of it */
        lc_sig[sig].app.sa_flags |= SA_RESTORER;
        lc_sig[sig].app.sa_restorer = (void (*)(void))lc_restorer;
#endif
        sigdelset(&lc_sig[sig].app.sa_mask, SIGKILL);
        sigdelset(&lc_sig[sig].app.sa_mask, SIGSTOP);
        lc_sig_install(sig);
    }
    lc_unlock(&lc_sig_lock, &saved);
    if (old)
        *old = prev;
    return 0;
}

LC_API int LC_WRAPPER(sigaction)(int sig, const struct sigaction *act, struct sigaction *old)
{
    return lc_set_action(sig, act, old);
}

#ifndef HOOKIT_STATIC
LC_API int __sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    return lc_set_action(sig, act, old);
}
#endif

/* signal() and friends are built on sigaction inside libc, out of our
 * reach, so each is rebuilt here with libc's own flags. */
static sighandler_t lc_set_handler(int sig, sighandler_t handler, int flags, int mask_self)
{
    if (handler == SIG_ERR || sig <= 0 || sig >= _NSIG) {
        errno = EINVAL;
        return SIG_ERR;
    }
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    sigemptyset(&act.sa_mask);
    if (mask_self)
        sigaddset(&act.sa_mask, sig);
    act.sa_flags = flags;
    if (lc_set_action(sig, &act, &old) < 0)
        return SIG_ERR;
    return old.sa_handler;
}

static int lc_bsd_flags(int sig)
{
    return sigismember(&lc_sigintr, sig) ? 0 : SA_RESTART;
}

LC_API sighandler_t LC_WRAPPER(signal)(int sig, sighandler_t handler)
{
    return lc_set_handler(sig, handler, lc_bsd_flags(sig), 1);
}

LC_API sighandler_t LC_WRAPPER(bsd_signal)(int sig, sighandler_t handler)
{
    return lc_set_handler(sig, handler, lc_bsd_flags(sig), 1);
}

LC_API sighandler_t LC_WRAPPER(ssignal)(int sig, sighandler_t handler)
{
    return lc_set_handler(sig, handler, lc_bsd_flags(sig), 1);
}

LC_API sighandler_t LC_WRAPPER(sysv_signal)(int sig, sighandler_t handler)
{
    return lc_set_handler(sig, handler, SA_RESETHAND | SA_NODEFER, 0);
}

LC_API sighandler_t LC_WRAPPER(__sysv_signal)(int sig, sighandler_t handler)
{
    return lc_set_handler(sig, handler, SA_RESETHAND | SA_NODEFER, 0);
}

LC_API sighandler_t LC_WRAPPER(sigset)(int sig, sighandler_t disp)
{
    sigset_t one, old;
    if (sig <= 0 || sig >= _NSIG) {
        errno = EINVAL;
        return SIG_ERR;
    }
    sigemptyset(&one);
    sigaddset(&one, sig);
    if (disp == SIG_HOLD) {
        struct sigaction cur;
        if (REAL(sigprocmask)(SIG_BLOCK, &one, &old) < 0 || lc_set_action(sig, NULL, &cur) < 0)
            return SIG_ERR;
        return sigismember(&old, sig) ? SIG_HOLD : cur.sa_handler;
    }
    sighandler_t prev = lc_set_handler(sig, disp, 0, 0);
    if (prev == SIG_ERR || REAL(sigprocmask)(SIG_UNBLOCK, &one, &old) < 0)
        return SIG_ERR;
    return sigismember(&old, sig) ? SIG_HOLD : prev;
}

LC_API int LC_WRAPPER(sigignore)(int sig)
{
    return lc_set_handler(sig, SIG_IGN, 0, 0) == SIG_ERR ? -1 : 0;
}

LC_API int LC_WRAPPER(siginterrupt)(int sig, int flag)
{
    struct sigaction act;
    if (sig <= 0 || sig >= _NSIG || lc_set_action(sig, NULL, &act) < 0) {
        errno = EINVAL;
        return -1;
    }
    if (flag) {
        sigaddset(&lc_sigintr, sig);
        act.sa_flags &= ~SA_RESTART;
    } else {
        sigdelset(&lc_sigintr, sig);
        act.sa_flags |= SA_RESTART;
    }
    return lc_set_action(sig, &act, NULL);
}

/* ---- masks and waits: keep the shootdown signal deliverable ------------------------------ */
const sigset_t *lc_signal_filter_mask(int how, const sigset_t *set, sigset_t *copy)
{
    if (!set || how == SIG_UNBLOCK || !lc_shootdown_signo || !sigismember(set, lc_shootdown_signo))
        return set;
    *copy = *set;
    sigdelset(copy, lc_shootdown_signo);
    return copy;
}

/* The application's mask is the kernel's plus lc_hidden: compute the mask
 * it asks for, give the kernel that without the kept-open signals, and
 * report its own view back.  Returns 0 or an error number. */
static int lc_change_mask(int how, const sigset_t *set, sigset_t *old, int thread_call)
{
    lc_ensure_init();
    sigset_t hidden_before = lc_hidden, kold, want;
    int rc;
    if (!set || (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)) {
        rc = thread_call ? REAL(pthread_sigmask)(how, set, &kold)
                         : (REAL(sigprocmask)(how, set, &kold) < 0 ? errno : 0);
    } else {
        /* A handler that runs in between restores the mask it found. */
        if (REAL(pthread_sigmask)(SIG_BLOCK, NULL, &want) != 0)
            return EINVAL;
        sigorset(&want, &want, &lc_hidden);
        if (how == SIG_BLOCK) {
            sigorset(&want, &want, set);
        } else if (how == SIG_UNBLOCK) {
            sigset_t keep;
            sigfillset(&keep);
            for (int sig = 1; sig < _NSIG; sig++)
                if (sigismember(set, sig) == 1)
                    sigdelset(&keep, sig);
            sigandset(&want, &want, &keep);
        } else {
            want = *set;
        }
        sigset_t hidden, kernel;
        sigandset(&hidden, &want, &lc_keep_open);
        kernel = want;
        for (int sig = 1; sig < _NSIG; sig++)
            if (sigismember(&hidden, sig) == 1)
                sigdelset(&kernel, sig);
        rc = REAL(pthread_sigmask)(SIG_SETMASK, &kernel, &kold);
        if (rc == 0)
            lc_hidden = hidden;
    }
    if (rc == 0 && old) {
        sigorset(old, &kold, &hidden_before);
        sigdelset(old, SIGKILL);
        sigdelset(old, SIGSTOP);
    }
    return rc;
}

LC_API int LC_WRAPPER(sigprocmask)(int how, const sigset_t *set, sigset_t *old)
{
    int rc = lc_change_mask(how, set, old, 0);
    if (rc) {
        errno = rc;
        return -1;
    }
    return 0;
}

LC_API int LC_WRAPPER(pthread_sigmask)(int how, const sigset_t *set, sigset_t *old)
{
    return lc_change_mask(how, set, old, 1);
}

void lc_signal_app_mask(sigset_t *mask)
{
    sigorset(mask, mask, &lc_hidden);
}

void lc_signal_hidden_get(sigset_t *hidden)
{
    *hidden = lc_hidden;
}

void lc_signal_hidden_set(const sigset_t *hidden)
{
    lc_hidden = *hidden;
}

/* A wait with a mask of its own (sigsuspend, pselect, ppoll, epoll_pwait,
 * signal_wait.c): the kernel gets the application's mask without the
 * kept-open signals, so a client's sampling signal (and the shootdown)
 * still arrives while the program waits.  Such a signal, consumed by
 * hookit or the client, would end the wait with an EINTR the program
 * would not have seen: the wait is resumed when nothing but those
 * signals interrupted it.  That is known when every signal the
 * application's wait mask lets in passes through lc_signal_entry, which
 * counts them.  An application handler the kernel calls directly (the
 * usual case) is therefore routed through lc_signal_entry for the wait's
 * duration (the same handler, flags and mask; two sigaction calls per
 * such signal and wait) when a client or libhookit keeps a signal open;
 * with only the layer's shootdown signal kept open nothing changes. */
const sigset_t *lc_signal_wait_begin(const sigset_t *app, sigset_t *kernel, struct lc_wait *w)
{
    lc_ensure_init();
    w->visible = lc_sig_visible;
    w->invisible = lc_sig_invisible;
    w->resumable = 0;
    sigemptyset(&w->routed);
    if (!app)
        return NULL;
    *kernel = *app;
    sigset_t saved, direct;
    sigemptyset(&direct);
    lc_lock(&lc_sig_lock, &saved);
    int samplers = 0, ndirect = 0;
    for (int sig = 1; sig < _NSIG; sig++) {
        if (sigismember(&lc_keep_open, sig) == 1) {
            sigdelset(kernel, sig);
            samplers |= sig != lc_shootdown_signo;
        }
        if (sigismember(app, sig) != 1 && lc_sig_manageable(sig) && !lc_sig[sig].ours &&
            lc_is_handler(&lc_sig[sig].app)) {
            sigaddset(&direct, sig);
            ndirect++;
        }
    }
    if (samplers && ndirect) {
        for (int sig = 1; sig < _NSIG; sig++)
            if (sigismember(&direct, sig) == 1) {
                lc_sig[sig].waiting++;
                lc_sig_install(sig);
            }
        w->routed = direct;
        ndirect = 0;
    }
    lc_unlock(&lc_sig_lock, &saved);
    w->resumable = !ndirect;
    return kernel;
}

void lc_signal_wait_end(struct lc_wait *w)
{
    if (sigisemptyset(&w->routed))
        return;
    sigset_t saved;
    lc_lock(&lc_sig_lock, &saved);
    for (int sig = 1; sig < _NSIG; sig++)
        if (sigismember(&w->routed, sig) == 1 && --lc_sig[sig].waiting == 0)
            lc_sig_install(sig);
    lc_unlock(&lc_sig_lock, &saved);
    sigemptyset(&w->routed);
}

int lc_signal_wait_resume(const struct lc_wait *w)
{
    return w->resumable && lc_sig_visible == w->visible && lc_sig_invisible != w->invisible;
}

/* sigwait & co would dequeue the shootdown signal as if it were the
 * application's: wait for the same set without it, via the system call. */
static int lc_sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
    sigset_t copy;
    const sigset_t *s = lc_signal_filter_mask(SIG_BLOCK, set, &copy);
    return (int)syscall(SYS_rt_sigtimedwait, s, info, timeout, _NSIG / 8);
}

LC_API int LC_WRAPPER(sigwait)(const sigset_t *set, int *sig)
{
    int r;
    do
        r = lc_sigtimedwait(set, NULL, NULL);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return errno;
    *sig = r;
    return 0;
}

LC_API int LC_WRAPPER(sigwaitinfo)(const sigset_t *set, siginfo_t *info)
{
    return lc_sigtimedwait(set, info, NULL);
}

LC_API int LC_WRAPPER(sigtimedwait)(const sigset_t *set, siginfo_t *info,
                                    const struct timespec *timeout)
{
    return lc_sigtimedwait(set, info, timeout);
}

/* ---- the handler ---------------------------------------------------------------------- */
static int lc_sig_is_fault(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
}

/* Die by `sig` as the default disposition would, after the fini. */
static void lc_die_by(int sig, siginfo_t *info)
{
    lc_debug("death by signal %d", sig);
    if (!lc_end_process(LC_EXIT_SIGNAL, sig))
        lc_yield_to_ending_thread();
    lc_fini_library();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    REAL(sigaction)(sig, &dfl, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    lc_raw_sigmask(SIG_UNBLOCK, &one, NULL);
    if (lc_sig_is_fault(sig) && info && info->si_code > 0)
        return;         /* the faulting instruction runs again and kills */
    syscall(SYS_tgkill, getpid(), lc_gettid(), sig);
    /* Still alive (a stop signal continued, or blocked elsewhere): back
     * to our handler. */
    sigset_t saved;
    lc_lock(&lc_sig_lock, &saved);
    lc_sig_install(sig);
    lc_unlock(&lc_sig_lock, &saved);
}

static void lc_stop_by(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    REAL(sigaction)(sig, &dfl, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    lc_raw_sigmask(SIG_UNBLOCK, &one, NULL);
    syscall(SYS_tgkill, getpid(), lc_gettid(), sig);
    sigset_t saved;
    lc_lock(&lc_sig_lock, &saved);
    lc_sig_install(sig);
    lc_unlock(&lc_sig_lock, &saved);
}

static void lc_signal_entry(int sig, siginfo_t *info, void *context)
{
    int saved_errno = errno;
    if (sig == lc_shootdown_signo && lc_shootdown_signal(sig, info)) {
        lc_sig_invisible++;
        errno = saved_errno;
        return;
    }
    sigset_t saved;
    lc_lock(&lc_sig_lock, &saved);
    struct sigaction app = lc_sig[sig].app;
    monitor_sighandler_t *internal = lc_sig[sig].internal;
    monitor_sighandler_t *client = lc_sig[sig].client;
    if (lc_is_handler(&app) && (app.sa_flags & SA_RESETHAND)) {
        lc_sig[sig].app.sa_handler = SIG_DFL;
        lc_sig[sig].app.sa_flags &= ~SA_SIGINFO;
        lc_sig_install(sig);
    }
    lc_unlock(&lc_sig_lock, &saved);

    if (internal && internal(sig, info, context) == 0) {
        lc_sig_invisible++;
        errno = saved_errno;
        return;
    }
    if (client && client(sig, info, context) == 0) {
        lc_sig_invisible++;
        errno = saved_errno;
        return;
    }
    errno = saved_errno;
    if (lc_is_handler(&app)) {
        lc_sig_visible++;
        if (app.sa_flags & SA_SIGINFO)
            app.sa_sigaction(sig, info, context);
        else
            app.sa_handler(sig);
        return;
    }
    lc_sig_invisible++;
    if (app.sa_handler == SIG_IGN)
        return;
    if (lc_sig_fatal(sig))
        lc_die_by(sig, info);
    else if (lc_sig_stops(sig))
        lc_stop_by(sig);
    errno = saved_errno;
}

/* Another thread may have held the lock when the process forked. */
void lc_signal_after_fork_child(void)
{
    lc_lock_reset(&lc_sig_lock);
}

/* ---- exec ------------------------------------------------------------------------------ */
/* What the kernel keeps across exec is SIG_IGN: put it back where only our
 * handler stands for the application's SIG_IGN. */
void lc_signal_before_exec(void)
{
    sigset_t saved;
    lc_lock(&lc_sig_lock, &saved);
    for (int sig = 1; sig < _NSIG; sig++)
        if (lc_sig_manageable(sig) && lc_sig[sig].ours && lc_sig[sig].app.sa_handler == SIG_IGN)
            REAL(sigaction)(sig, &lc_sig[sig].app, NULL);
    lc_unlock(&lc_sig_lock, &saved);
    /* the new program starts with the mask the application set */
    if (!sigisemptyset(&lc_hidden))
        REAL(pthread_sigmask)(SIG_BLOCK, &lc_hidden, NULL);
}

void lc_signal_after_failed_exec(void)
{
    if (!sigisemptyset(&lc_hidden))
        REAL(pthread_sigmask)(SIG_UNBLOCK, &lc_hidden, NULL);
    sigset_t saved;
    lc_lock(&lc_sig_lock, &saved);
    for (int sig = 1; sig < _NSIG; sig++)
        if (lc_sig_manageable(sig) && lc_sig[sig].ours)
            lc_sig_install(sig);
    lc_unlock(&lc_sig_lock, &saved);
}

/* ---- the client's side ------------------------------------------------------------------- */
/* libhookit's own first access to a signal (the profiler's sampling timer),
 * ahead of a libmonitor client's, invisible to the application. */
int lifecycle_signal_first(int sig, int (*handler)(int, siginfo_t *, void *))
{
    lc_ensure_init();
    if (!lc_sig_manageable(sig)) {
        errno = EINVAL;
        return -1;
    }
    sigset_t saved;
    lc_lock(&lc_sig_lock, &saved);
    lc_sig[sig].internal = handler;
    if (handler)        /* the sampling timer: kept deliverable, as a client's */
        sigaddset(&lc_keep_open, sig);
    lc_sig_install(sig);
    lc_unlock(&lc_sig_lock, &saved);
    return 0;
}

LC_API int monitor_sigaction(int sig, monitor_sighandler_t *handler, int flags,
                             struct sigaction *act)
{
    lc_ensure_init();
    if (!lc_sig_manageable(sig)) {
        errno = EINVAL;
        return -1;
    }
    sigset_t saved;
    lc_lock(&lc_sig_lock, &saved);
    struct lc_sigstate *s = &lc_sig[sig];
    s->client = handler;
    if (handler)
        sigaddset(&lc_keep_open, sig);
    else if (sig != lc_shootdown_signo && !s->internal)
        sigdelset(&lc_keep_open, sig);
    if (act) {
        s->client_mask = act->sa_mask;
        s->client_flags = act->sa_flags;
    } else {
        sigemptyset(&s->client_mask);
        s->client_flags = SA_RESTART;
    }
    lc_sig_install(sig);
    lc_unlock(&lc_sig_lock, &saved);
    return 0;
}

LC_API int monitor_real_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    lc_ensure_init();
    return REAL(sigprocmask)(how, set, old);
}

LC_API int monitor_real_pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    lc_ensure_init();
    return REAL(pthread_sigmask)(how, set, old);
}
