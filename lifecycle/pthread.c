/*
 * Threads: pthread_create's trampoline gives init_thread and fini_thread
 * inside each new thread (return, pthread_exit and cancellation alike, via
 * a cleanup handler); pthread_exit in main; the exit shootdown, where every
 * other live thread runs its fini_thread inside itself before fini_process.
 *
 * Shootdown: the ending thread queues the layer's signal (SIGRTMIN+8,
 * marked with a value so an application's use of that signal still reaches
 * it) to each thread and waits on a futex counter until all answered or
 * the deadline (HOOKIT_SHOOTDOWN_TIMEOUT ms) passes.  Threads that cannot
 * be reached are named on stderr, not waited for.
 */
#include "lifecycle/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LC_SHOOT_MAGIC 0x486b5344   /* "HkSD" in si_value */

struct lc_thread lc_main_thread = { .num = 0, .monitored = 1, .state = LC_T_RUNNING };
LC_TLS struct lc_thread *lc_self;
atomic_int lc_threaded;
int lc_shootdown_signo;

static struct lc_thread *lc_threads;         /* every thread we created */
static lc_spinlock lc_threads_lock = LC_SPINLOCK_INIT;
static atomic_int lc_next_num = 1;
static atomic_int lc_shoot_pending;
/* monitor_disable_new_threads: per calling thread, as libmonitor. */
static LC_TLS int lc_new_threads_disabled;
/* monitor_get_new_thread_info's data while pthread_create runs here. */
static LC_TLS struct monitor_thread_info *lc_new_thread_info;
static atomic_int lc_thread_support_done;

static void lc_own_end(void);
static int lc_last_thread(void);

struct lc_start {
    void *(*fn)(void *);
    void *arg;
    void *pre_data;
    struct lc_thread *thread;
    sigset_t hidden;            /* the creator's view of its mask (signal.c) */
};

struct lc_thread *lc_thread_self(void)
{
    if (lc_self)
        return lc_self;
    if (lc_gettid() == lc_main_thread.tid)
        return &lc_main_thread;
    return NULL;
}

void lc_thread_fini(struct lc_thread *t)
{
    int expected = LC_T_RUNNING;
    if (!atomic_compare_exchange_strong(&t->state, &expected, LC_T_FINISHING)) {
        expected = LC_T_INIT_SHOT;
        if (!atomic_compare_exchange_strong(&t->state, &expected, LC_T_FINISHING))
            return;
    }
    int saved = errno;
    lc_debug("thread %d end (tid %d)", t->num, (int)lc_gettid());
    /* main too, when another thread ends the process or main calls
     * pthread_exit: its data is init_process's, as libmonitor gives it */
    if (t == &lc_main_thread)
        monitor_fini_thread(lc_process_data);
    else if (t->monitored)
        monitor_fini_thread(t->user_data);
    LC_CLIENTS(fini_thread);
    atomic_store(&t->state, LC_T_DONE);
    if (atomic_exchange(&t->counted, 0) && atomic_fetch_sub(&lc_shoot_pending, 1) == 1)
        lc_futex_wake_all(&lc_shoot_pending);
    errno = saved;
}

/* ---- creation --------------------------------------------------------------------- */
/* The thread ends: fini, then leave the registry (a long-running program
 * may create millions of threads). */
static void lc_thread_cleanup(void *arg)
{
    struct lc_thread *t = arg;
    lc_thread_fini(t);
    if (atomic_load(&t->state) != LC_T_DONE)
        return;             /* a fini in progress elsewhere: keep it */
    sigset_t saved;
    lc_lock(&lc_threads_lock, &saved);
    for (struct lc_thread **p = &lc_threads; *p; p = &(*p)->next)
        if (*p == t) {
            *p = t->next;
            break;
        }
    int last = lc_last_thread();
    lc_unlock(&lc_threads_lock, &saved);
    lc_self = NULL;
    lc_release(t);
    if (last)
        lc_own_end();
}

/* A cancellation requested before the thread reached the program's start
 * routine (pthread_cancel right after pthread_create, or a creator that
 * outran a thread slow to be scheduled) must not act inside the
 * trampoline: the callbacks' own cancellation points (a client's
 * write(), the profiler's thread set-up) would end the thread before
 * init_thread completed and before the cleanup handler that gives
 * fini_thread was pushed, leaving a registered thread the exit shoot-down
 * waits for in vain.  So the trampoline runs with cancellation disabled and
 * restores the thread's state just before the start routine: the request
 * acts at the routine's first cancellation point, as without hookit, with
 * init_thread given and fini_thread to come from the cleanup handler. */
LC_THREAD_START_FUNC static void *lc_thread_start(void *arg)
{
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    volatile char bottom[8] = "stakbot";
    struct lc_start start = *(struct lc_start *)arg;
    lc_release(arg);
    struct lc_thread *t = start.thread;
    t->tid = lc_gettid();
    t->stack_bottom = (void *)bottom;
    lc_self = t;
    lc_signal_hidden_set(&start.hidden);
    lc_check_pid();

    /* Join the registry unless the process is already ending. */
    sigset_t saved;
    lc_lock(&lc_threads_lock, &saved);
    int live = atomic_load(&lc_proc_state) == LC_PROC_RUNNING;
    if (live) {
        t->next = lc_threads;
        lc_threads = t;
    }
    lc_unlock(&lc_threads_lock, &saved);
    if (!live) {
        lc_self = NULL;
        lc_release(t);
        pthread_setcancelstate(cancel_state, NULL);
        return start.fn(start.arg);
    }

    int e = errno;
    lc_debug("thread %d start (tid %d)", t->num, (int)t->tid);
    LC_CLIENTS(init_thread);
    if (t->monitored)
        t->user_data = monitor_init_thread(t->num, start.pre_data);
    errno = e;
    int expected = LC_T_INIT;
    if (!atomic_compare_exchange_strong(&t->state, &expected, LC_T_RUNNING))
        lc_thread_fini(t);      /* the process began ending during our init */

    void *ret;
    pthread_cleanup_push(lc_thread_cleanup, t);
    pthread_setcancelstate(cancel_state, NULL);
    ret = start.fn(start.arg);
    pthread_cleanup_pop(1);
    return ret;
}

LC_API int LC_WRAPPER(pthread_create)(pthread_t *thread, const pthread_attr_t *attr,
                                      void *(*fn)(void *), void *arg)
{
    lc_ensure_init();
    lc_check_pid();
    if (atomic_load(&lc_proc_state) == LC_PROC_NONE)
        lc_begin_process(NULL, NULL);       /* a constructor creates threads */
    if (atomic_load(&lc_proc_state) != LC_PROC_RUNNING)
        return REAL(pthread_create)(thread, attr, fn, arg);

    /* The user's client ignores threads created while the creator has
     * new threads disabled, by an ignored thread, or that pre_create
     * asks to ignore: no callbacks, no thread number (hookit's own
     * clients still see them). */
    struct lc_thread *self = lc_thread_self();
    int monitored = !lc_new_threads_disabled && (!self || self->monitored);
    void *pre_data = NULL;
    struct monitor_thread_info info = {
        __builtin_extract_return_addr(__builtin_return_address(0)), (void *)fn };
    int e = errno;
    atomic_store(&lc_threaded, 1);
    if (monitored && !atomic_exchange(&lc_thread_support_done, 1))
        monitor_init_thread_support();
    if (monitored) {
        lc_new_thread_info = &info;
        pre_data = monitor_thread_pre_create();
        lc_new_thread_info = NULL;
        monitored = pre_data != MONITOR_IGNORE_NEW_THREAD;
    }
    errno = e;

    struct lc_start *start = lc_alloc(sizeof *start);
    struct lc_thread *t = lc_alloc(sizeof *t);
    if (!start || !t) {
        lc_release(start);
        lc_release(t);
        return REAL(pthread_create)(thread, attr, fn, arg);
    }
    t->num = monitored ? atomic_fetch_add(&lc_next_num, 1) : -1;
    t->monitored = monitored;
    t->start_routine = (void *)fn;
    atomic_store(&t->state, LC_T_INIT);
    *start = (struct lc_start){ .fn = fn, .arg = arg, .pre_data = monitored ? pre_data : NULL,
                                .thread = t };
    lc_signal_hidden_get(&start->hidden);

    /* monitor_reset_stacksize: the client may want bigger stacks.  A copy
     * of the caller's attributes takes the new size (never destroyed: it
     * shares the caller's extension data). */
    pthread_attr_t local;
    int local_owned = 0;
    size_t size = 0;
    if (!attr) {
        if (pthread_attr_init(&local) == 0) {
            local_owned = 1;
            pthread_attr_getstacksize(&local, &size);
        }
    } else {
        pthread_attr_getstacksize(attr, &size);
        local = *attr;
    }
    size_t want = size ? monitor_reset_stacksize(size) : 0;
    if (want > size && (attr || local_owned) && pthread_attr_setstacksize(&local, want) == 0)
        attr = &local;
    int rc = REAL(pthread_create)(thread, attr, lc_thread_start, start);
    if (local_owned)
        pthread_attr_destroy(&local);
    if (rc != 0) {
        lc_release(start);
        lc_release(t);
    }
    if (monitored) {
        e = errno;
        /* Not after the process's end began in another thread: the
         * shoot-down signal is held while the callback runs, so an exit's
         * shoot-down waits for it (post_create never follows fini_thread or
         * fini_process), and a thread it already finalized makes none. */
        sigset_t shoot, old;
        sigemptyset(&shoot);
        sigaddset(&shoot, lc_shootdown_signo);
        REAL(pthread_sigmask)(SIG_BLOCK, &shoot, &old);
        struct lc_thread *me = lc_thread_self();
        if (atomic_load(&lc_proc_state) == LC_PROC_RUNNING
            && (!me || atomic_load(&me->state) < LC_T_FINISHING)) {
            lc_new_thread_info = &info;
            monitor_thread_post_create(pre_data);
            lc_new_thread_info = NULL;
        }
        REAL(pthread_sigmask)(SIG_SETMASK, &old, NULL);
        errno = e;
    }
    return rc;
}

/* ---- hookit's own thread ------------------------------------------------------------ */
/* At most one (the profiler's control thread).  glibc counts it among the
 * process's threads, and a process whose main thread called pthread_exit
 * ends when its last thread does: so when the program's last thread ends,
 * it ends ours first (stop, then join), and glibc's count reaches zero in
 * the program's thread, which then exits the process as it would have. */
static pthread_t lc_own;
static void (*lc_own_stop)(void);
static atomic_int lc_own_alive;

/* pthread_attr_setsigmask_np leaves out glibc's own signals (SIGSETXID,
 * SIGCANCEL): a setuid() in another thread still reaches this one. */
int lifecycle_own_thread(void *(*fn)(void *), void *arg, void (*stop)(void))
{
    lc_ensure_init();
    if (!stop || atomic_load(&lc_own_alive))
        return EBUSY;
    pthread_attr_t attr;
    sigset_t all;
    sigfillset(&all);
    int rc = pthread_attr_init(&attr);
    if (rc != 0)
        return rc;
    rc = pthread_attr_setsigmask_np(&attr, &all);
    if (rc == 0)
        rc = REAL(pthread_create)(&lc_own, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    if (rc == 0) {
        lc_own_stop = stop;
        atomic_store(&lc_own_alive, 1);
    }
    return rc;
}

/* The calling thread is the program's last: end ours before it. */
static void lc_own_end(void)
{
    if (!atomic_exchange(&lc_own_alive, 0))
        return;
    lc_debug("the program's last thread ends: hookit's own thread ends first");
    int saved = errno;
    lc_own_stop();
    pthread_join(lc_own, NULL);
    errno = saved;
}

/* Whether no thread of the program but the caller is left: main gone
 * (pthread_exit) and no thread we created still registered.  Threads the
 * layer did not create are unknown to it; ending our thread early then
 * only costs the live control. */
static int lc_last_thread(void)
{
    return atomic_load(&lc_proc_state) == LC_PROC_RUNNING && !lc_threads &&
           atomic_load(&lc_main_thread.state) == LC_T_DONE;
}

LC_API void LC_WRAPPER(pthread_exit)(void *value)
{
    /* Other threads end through the trampoline's cleanup; main has none. */
    if (lc_thread_self() == &lc_main_thread && atomic_load(&lc_proc_state) == LC_PROC_RUNNING) {
        lc_debug("pthread_exit in main");
        lc_thread_fini(&lc_main_thread);
        sigset_t saved;
        lc_lock(&lc_threads_lock, &saved);
        int last = lc_last_thread();
        lc_unlock(&lc_threads_lock, &saved);
        if (last)
            lc_own_end();
    }
    REAL(pthread_exit)(value);
    __builtin_unreachable();
}

/* ---- shootdown --------------------------------------------------------------------- */
static int lc_send_shootdown(pid_t tid)
{
    siginfo_t info;
    memset(&info, 0, sizeof info);
    info.si_signo = lc_shootdown_signo;
    info.si_code = SI_QUEUE;
    info.si_pid = getpid();
    info.si_uid = getuid();
    info.si_value.sival_int = LC_SHOOT_MAGIC;
    return (int)syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, lc_shootdown_signo, &info);
}

/* t is inside its fini_thread already (it was ending on its own, or it
 * lost the race to exit and runs its own): wait for it like the others,
 * or fini_process would come before its fini_thread.  It may finish
 * between our reading its state and our counting it: lc_thread_fini's end
 * (state DONE, then counted taken) and our check after counting decide
 * between them who gives the count back, exactly once.  1 if we wait. */
static int lc_wait_for_finishing(struct lc_thread *t)
{
    atomic_store(&t->counted, 1);
    if (atomic_load(&t->state) != LC_T_DONE)
        return 1; /* it takes counted when done */
    return atomic_exchange(&t->counted, 0) ? 0 : 1;
}

/* Ask t to run its fini_thread: 1 if we now wait for it. */
static int lc_shoot_one(struct lc_thread *t)
{
    int expected = LC_T_INIT;
    if (atomic_compare_exchange_strong(&t->state, &expected, LC_T_INIT_SHOT)) {
        atomic_store(&t->counted, 1);       /* it finis itself after init */
        return 1;
    }
    if (expected == LC_T_FINISHING)
        return lc_wait_for_finishing(t);
    if (expected != LC_T_RUNNING)
        return 0;
    atomic_store(&t->counted, 1);
    if (lc_send_shootdown(t->tid) != 0) {
        atomic_store(&t->counted, 0);
        return 0;
    }
    return 1;
}

void lc_shootdown(void)
{
    struct lc_thread *self = lc_thread_self();
    sigset_t saved;
    int n = 0;
    lc_lock(&lc_threads_lock, &saved);
    for (struct lc_thread *t = lc_threads; t; t = t->next)
        if (t != self) {
            atomic_fetch_add(&lc_shoot_pending, 1);
            if (!lc_shoot_one(t))
                atomic_fetch_sub(&lc_shoot_pending, 1);
            else
                n++;
        }
    if (self != &lc_main_thread) {
        atomic_fetch_add(&lc_shoot_pending, 1);
        if (!lc_shoot_one(&lc_main_thread))
            atomic_fetch_sub(&lc_shoot_pending, 1);
        else
            n++;
    }
    lc_unlock(&lc_threads_lock, &saved);
    if (!n)
        return;

    struct timespec deadline;
    lc_deadline_after_ms(&deadline, lc_cfg.shootdown_ms);
    int left;
    while ((left = atomic_load(&lc_shoot_pending)) > 0)
        if (lc_futex_wait(&lc_shoot_pending, left, &deadline) < 0)
            break;
    if (atomic_load(&lc_shoot_pending) <= 0)
        return;

    /* Name the threads that did not answer (all signals blocked, stopped...). */
    char tids[160] = "";
    size_t len = 0;
    int missing = 0;
    lc_lock(&lc_threads_lock, &saved);
    struct lc_thread *all[2] = { lc_threads, &lc_main_thread };
    for (int k = 0; k < 2; k++)
        for (struct lc_thread *t = all[k]; t; t = k ? NULL : t->next)
            if (atomic_exchange(&t->counted, 0)) {
                missing++;
                if (len < sizeof tids - 16)
                    len += snprintf(tids + len, sizeof tids - len, "%s%d", len ? "," : "",
                                    (int)t->tid);
            }
    atomic_store(&lc_shoot_pending, 0);
    lc_unlock(&lc_threads_lock, &saved);
    lc_diag("%d thread(s) did not run fini_thread within %ld ms (tid %s: signals blocked?); "
            "ending without them", missing, lc_cfg.shootdown_ms, tids);
}

int lc_shootdown_signal(int sig, siginfo_t *info)
{
    if (sig != lc_shootdown_signo || !info || info->si_code != SI_QUEUE ||
        info->si_pid != lc_pid || info->si_value.sival_int != LC_SHOOT_MAGIC)
        return 0;
    struct lc_thread *t = lc_thread_self();
    if (t)
        lc_thread_fini(t);
    return 1;
}

/* In a fork child only the forking thread lives: it becomes the main one. */
void lc_threads_after_fork_child(void)
{
    lc_threads = NULL;
    atomic_store(&lc_own_alive, 0);     /* ours is the parent's */
    lc_lock_reset(&lc_threads_lock);
    atomic_store(&lc_shoot_pending, 0);
    lc_main_thread.tid = lc_gettid();
    atomic_store(&lc_main_thread.state, LC_T_RUNNING);
    atomic_store(&lc_main_thread.counted, 0);
    lc_self = &lc_main_thread;
    atomic_store(&lc_threaded, 0);
    atomic_store(&lc_thread_support_done, 0);
}

/* The application's start routine of the calling thread (NULL in main). */
LC_API void *monitor_get_addr_thread_start(void)
{
    struct lc_thread *t = lc_thread_self();
    return t ? t->start_routine : NULL;
}

LC_API void monitor_disable_new_threads(void)
{
    lc_new_threads_disabled = 1;
}

LC_API void monitor_enable_new_threads(void)
{
    lc_new_threads_disabled = 0;
}

LC_API int monitor_get_new_thread_info(struct monitor_thread_info *mti)
{
    if (!mti || !lc_new_thread_info)
        return 1;
    *mti = *lc_new_thread_info;
    return 0;
}

/* Send sig to every other monitored thread (libmonitor's broadcast):
 * 0, as libmonitor returns on success. */
LC_API int monitor_broadcast_signal(int sig)
{
    struct lc_thread *self = lc_thread_self();
    sigset_t saved;
    lc_lock(&lc_threads_lock, &saved);
    for (struct lc_thread *t = lc_threads; t; t = t->next)
        if (t != self && t->monitored && atomic_load(&t->state) == LC_T_RUNNING)
            syscall(SYS_tgkill, getpid(), t->tid, sig);
    if (self != &lc_main_thread && atomic_load(&lc_main_thread.state) == LC_T_RUNNING)
        syscall(SYS_tgkill, getpid(), lc_main_thread.tid, sig);
    lc_unlock(&lc_threads_lock, &saved);
    return 0;
}
