/*
 * What the lifecycle files share.  Private to lifecycle/.
 */
#ifndef HOOKIT_LIFECYCLE_INTERNAL_H
#define HOOKIT_LIFECYCLE_INTERNAL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/types.h>
#include <time.h>

#include "lifecycle/lifecycle.h"
#include "lifecycle/real.h"
#include "monitor.h"

#define LC_TLS __thread __attribute__((tls_model("initial-exec")))
#define LC_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- configuration (util.c), read once at start ---------------------------- */
struct lc_config {
    int debug;              /* HOOKIT_DEBUG=1 */
    int follow;             /* HOOKIT_FOLLOW=0 turns child following off */
    long shootdown_ms;      /* HOOKIT_SHOOTDOWN_TIMEOUT: bounded wait at exit */
};
extern struct lc_config lc_cfg;
void lc_read_config(void);

/* ---- small helpers (util.c), async-signal-safe unless noted ----------------- */
void lc_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define lc_debug(...) do { if (LC_UNLIKELY(lc_cfg.debug)) lc_diag(__VA_ARGS__); } while (0)
pid_t lc_gettid(void);
void lc_raw_sigmask(int how, const sigset_t *set, sigset_t *old);
void lc_deadline_after_ms(struct timespec *deadline, long ms);
/* Wait while *addr == val, until *deadline (CLOCK_MONOTONIC; NULL: no limit).
 * Returns 0 when woken or changed, -1 at the deadline. */
int lc_futex_wait(atomic_int *addr, int val, const struct timespec *deadline);
void lc_futex_wake_all(atomic_int *addr);

/* A spinlock (common/spin.h) that blocks every signal while held, so a
 * handler on the same thread can never spin on it. */
typedef struct { volatile int word; } lc_spinlock;
#define LC_SPINLOCK_INIT { 0 }
/* Zeroed memory that never comes from malloc (util.c): the program's own,
 * maybe instrumented, malloc must not run on the layer's behalf. */
void *lc_alloc(size_t size);
void lc_release(void *p);
void lc_lock(lc_spinlock *lock, sigset_t *saved);
void lc_unlock(lc_spinlock *lock, const sigset_t *saved);
/* In a fork child: a lock another thread held at fork is free again. */
static inline void lc_lock_reset(lc_spinlock *lock) { __atomic_store_n(&lock->word, 0, __ATOMIC_RELEASE); }

/* ---- registered lc_clients (callbacks.c) ------------------------------------ */
#define LC_MAX_CLIENTS 4
extern const struct lc_client *lc_clients[LC_MAX_CLIENTS];
extern atomic_int lc_nclients;
/* Call client->field(args) for every registered client having it. */
#define LC_CLIENTS(field, ...)                                          \
    do {                                                                \
        int lc_n_ = atomic_load(&lc_nclients);                          \
        for (int lc_i_ = 0; lc_i_ < lc_n_; lc_i_++)                     \
            if (lc_clients[lc_i_] && lc_clients[lc_i_]->field)          \
                lc_clients[lc_i_]->field(__VA_ARGS__);                  \
    } while (0)

/* ---- the process (main.c) ---------------------------------------------------- */
/* The program's start: libc's __libc_start_main, which the dynamic variant
 * overrides, and main, which the static one wraps (ld --wrap=main). */
typedef int lc_main_fn(int, char **, char **);
typedef int lc_start_main_fn(lc_main_fn *main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                             void (*rtld_fini)(void), void *stack_end);
lc_start_main_fn __libc_start_main;
lc_main_fn __wrap_main;
#ifdef HOOKIT_STATIC
/* The program's own main, as `ld --wrap=main` renames it; weak: NULL when
 * libhookit.a is linked without --wrap=main (main.c then starts the
 * process from its constructor). */
extern lc_main_fn __real_main __attribute__((weak));
#endif
enum { LC_PROC_NONE, LC_PROC_RUNNING, LC_PROC_ENDING, LC_PROC_ENDED };
extern atomic_int lc_proc_state;
extern pid_t lc_pid;
extern int lc_argc;
extern char **lc_argv;
extern void *lc_process_data;       /* monitor_init_process's result */
extern void *lc_main_addr;          /* the application's main */

void lc_ensure_init(void);
/* Deliver init_process once (argc may be NULL: use lc_argc). */
void lc_begin_process(int *argc, char **argv);
/* The process is ending: every other thread runs fini_thread inside itself
 * (bounded wait), then fini_process.  Returns 1 if this call did it, 0 if
 * the process had already ended or another thread is ending it. */
int lc_end_process(int how, int signo);
/* The process ends in another thread: run our own fini_thread and wait for
 * that thread to finish the process-level fini (never returns early unless
 * the ending thread is the caller itself). */
void lc_yield_to_ending_thread(void);
/* The process ends normally (exit, return from main): fini, or wait for the
 * thread that is already ending it. */
int lc_exit_normal(void);   /* 0: another thread ends the process (park) */
/* Before a real exit/_exit: the process fini, or park while another
 * thread's exit ends the process. */
void lc_exit_gate(void);
void lc_main_after_fork_child(void);
/* A fork we did not see (clone, libc-internal): redo the child's setup. */
void lc_check_pid(void);
void lc_after_fork_child(void *fork_data);
/* monitor_real_fork's child: no callbacks for the user's client (as with
 * libmonitor); the internal clients still get post_fork_child. */
void lc_after_real_fork_child(void);
/* monitor_fini_library, at most once per process image (exit's destructor,
 * _exit, exec, death by a signal); lc_library_fini_reset() re-arms it. */
void lc_fini_library(void);
void lc_library_fini_reset(void);
/* An exit wrapper lost the race to end the process: wait for the thread
 * that won to finish the process (its exit then ends this thread too);
 * returns if that thread's end was undone (a failed exec). */
void lc_park_exit_loser(void);
int lc_end_for_exec(void);
void lc_resume_after_failed_exec(void);

/* ---- threads (pthread.c) ------------------------------------------------------ */
enum { LC_T_INIT, LC_T_INIT_SHOT, LC_T_RUNNING, LC_T_FINISHING, LC_T_DONE };
struct lc_thread {
    pid_t tid;
    int num;                    /* 0 = main, then 1, 2, ... in creation order */
    int monitored;              /* the user's client wants this thread */
    void *user_data;            /* monitor_init_thread's result */
    void *stack_bottom;         /* an address in the thread's bottom frame */
    void *start_routine;        /* the application's start routine */
    atomic_int state;
    atomic_int counted;         /* counted in the shootdown in progress */
    struct lc_thread *next;
};
extern struct lc_thread lc_main_thread;
extern LC_TLS struct lc_thread *lc_self;
extern atomic_int lc_threaded;
struct lc_thread *lc_thread_self(void);
/* Run fini_thread for t, inside t, at most once. */
void lc_thread_fini(struct lc_thread *t);
/* Ask every other live thread to run its fini_thread and wait (bounded). */
void lc_shootdown(void);
void lc_threads_after_fork_child(void);
/* The shootdown signal arrived: returns 1 if it was ours (handled). */
int lc_shootdown_signal(int sig, siginfo_t *info);
extern int lc_shootdown_signo;

/* ---- signals (signal.c) --------------------------------------------------------- */
void lc_signal_init(void);
void lc_signal_before_exec(void);
void lc_signal_after_failed_exec(void);
void lc_signal_after_fork_child(void);
/* Remove the layer's own signal from a mask the application asks for. */
const sigset_t *lc_signal_filter_mask(int how, const sigset_t *set, sigset_t *copy);
/* The calling thread's mask as the application sees it, from the kernel's
 * (the signals kept deliverable for a client that the application blocked). */
void lc_signal_app_mask(sigset_t *mask);
/* A wait with a temporary mask (signal_wait.c): the mask for the kernel
 * (the kept-open signals removed; NULL for no mask), and, after the wait
 * failed with EINTR, whether only signals the application would not have
 * seen interrupted it (then the wait goes on). */
struct lc_wait {
    unsigned long visible, invisible;
    int resumable;
    sigset_t routed;            /* application handlers routed through the layer meanwhile */
};
const sigset_t *lc_signal_wait_begin(const sigset_t *app, sigset_t *kernel, struct lc_wait *w);
/* After the wait returned (every time): the routed handlers back. */
void lc_signal_wait_end(struct lc_wait *w);
int lc_signal_wait_resume(const struct lc_wait *w);
/* A new thread inherits its creator's view. */
void lc_signal_hidden_get(sigset_t *hidden);
void lc_signal_hidden_set(const sigset_t *hidden);

/* ---- exec (exec.c) ---------------------------------------------------------------- */
void lc_follow_capture(void);
/* envp with hookit's environment put back (following on), or envp itself.
 * The result is freed with lc_follow_free(). */
char **lc_follow_env(char *const envp[]);
void lc_follow_free(char **env, char *const envp[]);

/* ---- fork (fork.c) ------------------------------------------------------------------- */
void lc_fork_init(void);
/* pre_fork (user's and internal) and its data; post_fork in the parent. */
void *lc_pre_fork_callbacks(void);
void lc_post_fork_callbacks(pid_t child, void *data);

/* ---- start functions (main.c, pthread.c), for monitor_in_start_func_* and
 * monitor_unwind_*_bottom_frame: the process's and each thread's bottom frame
 * are the only functions in their sections. */
#define LC_MAIN_START_FUNC __attribute__((section("hookit_lc_main"), noinline))
#define LC_THREAD_START_FUNC __attribute__((section("hookit_lc_thread"), noinline))

#endif
