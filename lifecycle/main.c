/*
 * Process start and end: the layer's initialisation, the entry into main
 * (override of __libc_start_main, or __wrap_main when linked with
 * `ld --wrap=main`), init_process / fini_process, and the last-chance
 * fini from a destructor for exits libc takes internally (err, error, the
 * last thread's exit after pthread_exit in main).
 */
#include "lifecycle/internal.h"

#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

atomic_int lc_proc_state = LC_PROC_NONE;
pid_t lc_pid;
int lc_argc;
char **lc_argv;
void *lc_process_data;
void *lc_main_addr;

static atomic_int lc_init_state;        /* 0 none, 1 running, 2 done */
static atomic_int lc_ending_tid;        /* the thread running the process fini */
static atomic_int lc_end_owner;         /* the thread that ended this image */
static atomic_int lc_exit_begun;        /* begin_process_exit has returned */
static atomic_int lc_shootdown_blockers;
static atomic_int lc_library_ended;     /* monitor_fini_library given */
/* monitor_block_shootdown: this thread holds one of lc_shootdown_blockers. */
static LC_TLS int lc_blocking_shootdown;

/* ---- initialisation ---------------------------------------------------------- */
#ifndef HOOKIT_STATIC
struct lc_real_table lc_real;
static lc_start_main_fn *lc_real_start_main;

void lc_resolve_reals(void)
{
#define LC_RESOLVE(name)                                                  \
    lc_real.name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name);           \
    if (!lc_real.name)                                                    \
        lc_real.name = (__typeof__(name) *)dlsym(RTLD_DEFAULT, #name);
    LC_REAL_FUNCS(LC_RESOLVE)
#undef LC_RESOLVE
    lc_real_start_main = (lc_start_main_fn *)dlsym(RTLD_NEXT, "__libc_start_main");
}
#else
void lc_resolve_reals(void) {}
#endif

static void lc_find_libc_start_funcs(void);

static void lc_do_init(void)
{
    lc_pid = getpid();
    lc_main_thread.tid = lc_pid;
    atomic_store(&lc_main_thread.state, LC_T_RUNNING);
    lc_resolve_reals();
    lc_read_config();
    lc_follow_capture();
    lc_signal_init();
    lc_fork_init();
    lc_find_libc_start_funcs();
}

void lc_ensure_init(void)
{
    if (atomic_load_explicit(&lc_init_state, memory_order_acquire) == 2)
        return;
    int expected = 0;
    if (atomic_compare_exchange_strong(&lc_init_state, &expected, 1)) {
        int saved = errno;
        lc_do_init();
        errno = saved;
        atomic_store(&lc_init_state, 2);
        return;
    }
    /* Another thread is initialising (only possible very early). */
    while (atomic_load(&lc_init_state) != 2)
        ;
}

/* argv when the process starts before our constructor saw it. */
static void lc_argv_from_proc(void)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    static char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = 0;
    static char *args[64];
    int argc = 0;
    for (char *p = buf; p < buf + n && argc < 63; p += strlen(p) + 1)
        args[argc++] = p;
    args[argc] = NULL;
    lc_argc = argc;
    lc_argv = args;
}

/* ELF constructor: argc/argv come from ld.so.  If the process will not
 * enter main through us (libhookit dlopen'ed, or loaded as a dependency
 * of a preloaded library so libc's __libc_start_main wins), start now. */
#ifdef HOOKIT_STATIC
static int lc_main_is_ours(void) { return __real_main != NULL; }
#else
int lc_own_start_main(lc_main_fn *, int, char **, void (*)(void), void (*)(void),
                      void (*)(void), void *)
    __attribute__((alias("__libc_start_main"), visibility("hidden")));
static int lc_main_is_ours(void)
{
    return dlsym(RTLD_DEFAULT, "__libc_start_main") == (void *)lc_own_start_main;
}
#endif

__attribute__((constructor(101))) static void lc_constructor(int argc, char **argv, char **envp)
{
    if (argv && !lc_argv) {
        lc_argc = argc;
        lc_argv = argv;
    }
    lc_ensure_init();
    monitor_init_library();
    lc_main_thread.stack_bottom = __builtin_frame_address(0);
    if (!lc_main_is_ours())
        lc_begin_process(NULL, NULL);
}

__attribute__((destructor(101))) static void lc_destructor(void)
{
    /* Last chance: an exit we did not see (libc-internal). */
    if (atomic_load(&lc_proc_state) == LC_PROC_RUNNING && getpid() == lc_pid)
        lc_end_process(LC_EXIT_NORMAL, 0);
    lc_fini_library();
}

void lc_fini_library(void)
{
    if (atomic_exchange(&lc_library_ended, 1))
        return;
    int saved = errno;
    monitor_fini_library();
    errno = saved;
}

void lc_library_fini_reset(void)
{
    atomic_store(&lc_library_ended, 0);
}

/* ---- start ---------------------------------------------------------------------- */
void lc_begin_process(int *argc, char **argv)
{
    lc_ensure_init();
    int expected = LC_PROC_NONE;
    if (!atomic_compare_exchange_strong(&lc_proc_state, &expected, LC_PROC_RUNNING))
        return;
    int saved = errno;
    if (!lc_argv)
        lc_argv_from_proc();
    lc_debug("init_process");
    LC_CLIENTS(init_process);
    lc_process_data = monitor_init_process(argc ? argc : &lc_argc, argv ? argv : lc_argv, NULL);
    errno = saved;
}

static int lc_main_common(int (*main_fn)(int, char **, char **), int argc, char **argv,
                          char **envp);

#ifndef HOOKIT_STATIC
static lc_main_fn *lc_app_main;

static int lc_main(int argc, char **argv, char **envp)
{
    return lc_main_common(lc_app_main, argc, argv, envp);
}

LC_API int __libc_start_main(lc_main_fn *main, int argc, char **argv, void (*init)(void),
                             void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    lc_ensure_init();
    lc_app_main = main;
    lc_main_addr = (void *)main;
    monitor_start_main_init();      /* as libmonitor: main is known */
    return lc_real_start_main(lc_main, argc, argv, init, fini, rtld_fini, stack_end);
}
#else
LC_API int __wrap_main(int argc, char **argv, char **envp)
{
    lc_ensure_init();
    lc_main_addr = (void *)__real_main;
    monitor_start_main_init();
    return lc_main_common(__real_main, argc, argv, envp);
}
#endif

LC_MAIN_START_FUNC static int lc_main_common(int (*main_fn)(int, char **, char **), int argc,
                                             char **argv, char **envp)
{
    /* A local's address: inside this frame, whatever the compiler does
     * with the frame pointer. */
    volatile char bottom[8] = "stakbot";
    lc_main_thread.stack_bottom = (void *)bottom;
    lc_ensure_init();
    lc_argc = argc;
    lc_argv = argv;
    lc_begin_process(&argc, argv);
    monitor_at_main();
#ifdef HOOKIT_STATIC
    /* libmonitor's static hook: a program defining it takes main over. */
    monitor_wrap_main(lc_argc, lc_argv, envp);
#endif
    int status = main_fn(argc, argv, envp);
    lc_exit_gate();
    return status;      /* libc calls exit(status) */
}

/* ---- end ---------------------------------------------------------------------- */
static void lc_wait_shootdown_blockers(void)
{
    struct timespec deadline;
    lc_deadline_after_ms(&deadline, lc_cfg.shootdown_ms);
    int n;
    while ((n = atomic_load(&lc_shootdown_blockers)) > 0)
        if (lc_futex_wait(&lc_shootdown_blockers, n, &deadline) < 0) {
            lc_diag("a client kept the exit shootdown blocked for %ld ms; going on",
                    lc_cfg.shootdown_ms);
            return;
        }
}

static int lc_claim_end(void)
{
    if (atomic_load(&lc_proc_state) == LC_PROC_NONE)
        lc_begin_process(NULL, NULL);   /* an end before main: start first */
    int expected = LC_PROC_RUNNING;
    if (!atomic_compare_exchange_strong(&lc_proc_state, &expected, LC_PROC_ENDING))
        return 0;
    atomic_store(&lc_exit_begun, 0);
    atomic_store(&lc_ending_tid, lc_gettid());
    atomic_store(&lc_end_owner, lc_gettid());
    return 1;
}

/* begin_process_exit has run: threads racing to exit may now run their
 * fini_thread (never before it, as libmonitor orders them). */
static void lc_mark_exit_begun(void)
{
    atomic_store(&lc_exit_begun, 1);
    lc_futex_wake_all(&lc_exit_begun);
}

static void lc_mark_ended(int state)
{
    atomic_store(&lc_ending_tid, 0);
    atomic_store(&lc_proc_state, state);
    lc_futex_wake_all(&lc_proc_state);
}

int lc_end_process(int how, int signo)
{
    lc_ensure_init();
    lc_check_pid();
    if (!lc_claim_end())
        return 0;
    int saved = errno;
    lc_debug("process ends: how=%d signal=%d", how, signo);
    monitor_begin_process_exit(how);
    lc_mark_exit_begun();
    lc_wait_shootdown_blockers();
    lc_shootdown();
    struct lc_thread *self = lc_thread_self();
    if (self && self != &lc_main_thread)
        lc_thread_fini(self);
    monitor_fini_process(how, lc_process_data);
    LC_CLIENTS(fini_process, how, signo);
    if (self == &lc_main_thread)
        atomic_store(&lc_main_thread.state, LC_T_DONE);
    lc_mark_ended(LC_PROC_ENDED);
    errno = saved;
    return 1;
}

int lc_exit_normal(void)
{
    lc_ensure_init();
    if (lc_end_process(LC_EXIT_NORMAL, 0))
        return 1;
    if (atomic_load(&lc_end_owner) == lc_gettid())
        return 1;       /* exit again from an atexit handler, a destructor... */
    lc_yield_to_ending_thread();
    return atomic_load(&lc_end_owner) == lc_gettid() ||
           atomic_load(&lc_proc_state) == LC_PROC_NONE;
}

void lc_yield_to_ending_thread(void)
{
    if (atomic_load(&lc_ending_tid) == lc_gettid())
        return;         /* re-entered from our own fini (a callback exits) */
    while (!atomic_load(&lc_exit_begun) && atomic_load(&lc_proc_state) == LC_PROC_ENDING)
        lc_futex_wait(&lc_exit_begun, 0, NULL);
    struct lc_thread *self = lc_thread_self();
    if (self)
        lc_thread_fini(self);
    while (atomic_load(&lc_proc_state) == LC_PROC_ENDING)
        lc_futex_wait(&lc_proc_state, LC_PROC_ENDING, NULL);
}

void lc_exit_gate(void)
{
    while (!lc_exit_normal())
        lc_park_exit_loser();   /* another thread's exit ends us, or resumed */
}

/* Two threads calling exit at once: the real exit of the thread that won
 * runs the atexit handlers and destructors (monitor_fini_library among
 * them); a second real exit would end the process under it. */
void lc_park_exit_loser(void)
{
    int st;
    while ((st = atomic_load(&lc_proc_state)) == LC_PROC_ENDED || st == LC_PROC_ENDING)
        lc_futex_wait(&lc_proc_state, st, NULL);
}

/* exec: the old image ends (fini_process(how=exec)); other threads are shot
 * down.  The exec'ing thread keeps its state, so a failed exec resumes. */
int lc_end_for_exec(void)
{
    lc_ensure_init();
    lc_check_pid();
    if (!lc_claim_end())
        return 0;
    int saved = errno;
    lc_debug("process image ends: exec");
    monitor_begin_process_exit(LC_EXIT_EXEC);
    lc_mark_exit_begun();
    lc_wait_shootdown_blockers();
    lc_shootdown();
    struct lc_thread *self = lc_thread_self();
    if (self && self != &lc_main_thread)
        lc_thread_fini(self);   /* the exec'ing thread ends too */
    monitor_fini_process(LC_EXIT_EXEC, lc_process_data);
    LC_CLIENTS(pre_exec);
    lc_fini_library();
    lc_mark_ended(LC_PROC_ENDED);
    errno = saved;
    return 1;
}

void lc_resume_after_failed_exec(void)
{
    int saved = errno;
    int expected = LC_PROC_ENDED;
    if (atomic_compare_exchange_strong(&lc_proc_state, &expected, LC_PROC_RUNNING)) {
        atomic_store(&lc_end_owner, 0);
        lc_library_fini_reset();
        lc_futex_wake_all(&lc_proc_state);      /* exit losers parked meanwhile */
        lc_debug("exec failed: monitoring resumes");
        LC_CLIENTS(exec_failed);
        lc_process_data = monitor_init_process(&lc_argc, lc_argv, NULL);
    }
    errno = saved;
}

/* ---- support functions ------------------------------------------------------------ */
/* A client that gains control before the layer: start now (init_process). */
LC_API void monitor_initialize(void)
{
    lc_begin_process(NULL, NULL);
}

LC_API void *monitor_stack_bottom(void)
{
    struct lc_thread *t = lc_thread_self();
    return t ? t->stack_bottom : NULL;
}

extern char __start_hookit_lc_main[], __stop_hookit_lc_main[];
extern char __start_hookit_lc_thread[], __stop_hookit_lc_thread[];

LC_API int monitor_unwind_process_bottom_frame(void *addr)
{
    return (char *)addr >= __start_hookit_lc_main && (char *)addr < __stop_hookit_lc_main;
}

LC_API int monitor_unwind_thread_bottom_frame(void *addr)
{
    return (char *)addr >= __start_hookit_lc_thread && (char *)addr < __stop_hookit_lc_thread;
}

LC_API int monitor_in_start_func_narrow(void *addr)
{
    return monitor_unwind_process_bottom_frame(addr) || monitor_unwind_thread_bottom_frame(addr);
}

/* libc's own start functions (below our frames), found once at start so
 * the check is async-signal-safe (samplers call it from handlers). */
static struct { char *lo, *hi; } lc_libc_start[3];

static void lc_find_libc_start_funcs(void)
{
#ifndef HOOKIT_STATIC
    static const char *const names[] = { "__libc_start_main", "clone", "clone3" };
    for (int i = 0; i < 3; i++) {
        void *fn = dlsym(RTLD_NEXT, names[i]);
        Dl_info info;
        const ElfW(Sym) *sym = NULL;
        if (fn && dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size) {
            lc_libc_start[i].lo = (char *)fn;
            lc_libc_start[i].hi = (char *)fn + sym->st_size;
        }
    }
#endif
}

LC_API int monitor_in_start_func_wide(void *addr)
{
    if (monitor_in_start_func_narrow(addr))
        return 1;
    for (int i = 0; i < 3; i++)
        if ((char *)addr >= lc_libc_start[i].lo && (char *)addr < lc_libc_start[i].hi)
            return 1;
    return 0;
}

/* libmonitor's contract: 0 while the process runs (the exit shootdown now
 * waits until this thread unblocks, bounded by HOOKIT_SHOOTDOWN_TIMEOUT),
 * non-zero once it is exiting (the caller skips its work, then calls
 * monitor_unblock_shootdown as usual).  Not nested, per thread. */
LC_API int monitor_block_shootdown(void)
{
    if (lc_blocking_shootdown)
        return atomic_load(&lc_proc_state) >= LC_PROC_ENDING;
    if (atomic_load(&lc_proc_state) >= LC_PROC_ENDING)
        return 1;
    atomic_fetch_add(&lc_shootdown_blockers, 1);
    lc_blocking_shootdown = 1;
    if (atomic_load(&lc_proc_state) >= LC_PROC_ENDING) {
        monitor_unblock_shootdown();
        return 1;
    }
    return 0;
}

LC_API void monitor_unblock_shootdown(void)
{
    if (!lc_blocking_shootdown)
        return;
    lc_blocking_shootdown = 0;
    if (atomic_fetch_sub(&lc_shootdown_blockers, 1) == 1)
        lc_futex_wake_all(&lc_shootdown_blockers);
}

/* Process-wide state a fork child starts from (fork.c). */
void lc_main_after_fork_child(void)
{
    atomic_store(&lc_end_owner, 0);
    atomic_store(&lc_exit_begun, 0);
    atomic_store(&lc_ending_tid, 0);
    atomic_store(&lc_shootdown_blockers, lc_blocking_shootdown);
    lc_library_fini_reset();
}
