/* Start-up, shut-down, and the bridge from the lifecycle layer to the
 * profiler plugin.
 *
 * libhookit initialises from its ELF constructor or from the first hook,
 * whichever comes first.  When the lifecycle layer is linked in (always,
 * in libhookit proper) it drives everything else: thread start/end, fork,
 * exec, dlopen, and the one process end.  The destructor below is the
 * last-chance fallback. */
#include "common/foreign.h"
#include "hookit/internal.h"
#include "hookit/io_api.h"
#include "hookit/mpi_api.h"
#include "lifecycle/lifecycle.h"
#include "monitor.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Weak so libhookit links even without the lifecycle layer. */
#pragma weak lifecycle_register

static volatile int init_state;         /* 0 not started, 1 running, 2 done */
static volatile int finished;

HK_NOINSTR static void send(uint32_t type)
{
    struct hookit_event ev = { .type = type };
    hk_plugin_event(&ev);
}

HK_NOINSTR static void send_thread(uint32_t type)
{
    struct hookit_event ev = { .type = type, .tid = (pid_t)syscall(SYS_gettid) };
    hk_plugin_event(&ev);
}

/* The lifecycle layer numbers threads as they are created (in the creating
 * thread), which is the order a profile lists them in. */
#pragma weak monitor_get_thread_num

HK_NOINSTR static void on_init_thread(void)
{
    struct hookit_event ev = { .type = HOOKIT_EV_THREAD_START, .tid = (pid_t)syscall(SYS_gettid),
                               .thread_num = monitor_get_thread_num ? monitor_get_thread_num() : -1 };
    hk_plugin_event(&ev);
}
HK_NOINSTR static void on_fini_thread(void)
{
    send_thread(HOOKIT_EV_THREAD_END);
    hk_flow_thread_end();
}
HK_NOINSTR static void on_pre_fork(void) { send(HOOKIT_EV_FORK_PREPARE); }
HK_NOINSTR static void on_post_fork_parent(void) { send(HOOKIT_EV_FORK_PARENT); }
HK_NOINSTR static void on_pre_exec(void) { send(HOOKIT_EV_EXEC); }
HK_NOINSTR static void on_exec_failed(void) { send(HOOKIT_EV_EXEC_FAILED); }

/* A forked child: only this thread survives; the plugin starts the child's
 * own profile.  finished is per process: the child has not finished. */
HK_NOINSTR static void on_post_fork_child(void)
{
    finished = 0;
    send(HOOKIT_EV_FORK_CHILD);
}

HK_NOINSTR static void on_dlopen(const char *path, void *handle)
{
    hk_io_guard++; /* the scan's lock is ours: no wait of the program */
    hk_rebind_scan();
    hk_io_guard--;
    struct hookit_event ev = { .type = HOOKIT_EV_DLOPEN, .path = path, .handle = handle };
    hk_plugin_event(&ev);
}

HK_NOINSTR static void on_pre_dlclose(void *handle)
{
    struct hookit_event ev = { .type = HOOKIT_EV_PRE_DLCLOSE, .handle = handle };
    hk_plugin_event(&ev);
}

HK_NOINSTR static void on_dlclose(void *handle)
{
    struct hookit_event ev = { .type = HOOKIT_EV_DLCLOSE, .handle = handle };
    hk_plugin_event(&ev);
}

HK_NOINSTR static void on_mpi_rank(int rank, int size)
{
    struct hookit_event ev = { .type = HOOKIT_EV_MPI_RANK, .rank = rank, .size = size };
    hk_plugin_event(&ev);
}

/* A normal end is where exit() begins, before its atexit handlers and the
 * destructors: a plugin that can (HOOKIT_CAP_LATE_EXIT) writes what it has
 * now and goes on collecting until our destructor, the last of the
 * program's code to run, finishes it. */
HK_NOINSTR static int finish_later(int how)
{
    if (how != LC_EXIT_NORMAL || !(hk_plugin.info.caps & HOOKIT_CAP_LATE_EXIT))
        return 0;
    hk_hooks_only_this_thread();
    send(HOOKIT_EV_EXITING);
    return 1;
}

HK_NOINSTR static void on_fini_process(int how, int signo)
{
    if (finish_later(how))
        return;
    if (how == LC_EXIT_SIGNAL) {
        struct hookit_event ev = { .type = HOOKIT_EV_SIGNAL_DEATH, .signo = signo };
        hk_plugin_event(&ev);
    }
    hk_finish(how == LC_EXIT_SIGNAL ? HOOKIT_END_SIGNAL :
              how == LC_EXIT_EXEC ? HOOKIT_END_EXEC : HOOKIT_END_EXIT);
}

HK_NOINSTR static void on_pre_set_user(uid_t euid)
{
    struct hookit_event ev = { .type = HOOKIT_EV_SET_USER, .uid = euid };
    hk_plugin_event(&ev);
}

static const struct lc_client bridge = {
    .init_process = hk_init,
    .fini_process = on_fini_process,
    .init_thread = on_init_thread,
    .fini_thread = on_fini_thread,
    .pre_fork = on_pre_fork,
    .post_fork_parent = on_post_fork_parent,
    .post_fork_child = on_post_fork_child,
    .pre_exec = on_pre_exec,
    .exec_failed = on_exec_failed,
    .post_dlopen = on_dlopen,
    .pre_dlclose = on_pre_dlclose,
    .post_dlclose = on_dlclose,
    .mpi_rank = on_mpi_rank,
    .mpi_call = hk_mpi_lifecycle,
    .pre_set_user = on_pre_set_user,
};

/* An instrumented function in .preinit_array starts us before libc's own
 * initialisation has set environ: getenv would see no variable at all (no
 * HOOKIT_OUTPUT, no HOOKIT_DEBUG, no JPROFOPTS).  The environment is on the
 * stack above argv, where the dynamic linker found it; libc sets environ to
 * the same array a moment later (__libc_stack_end: common/foreign.h). */

HK_NOINSTR static void find_environment(void)
{
    if (environ || !__libc_stack_end)
        return;
    long *sp = __libc_stack_end;
    long argc = sp[0];
    char **argv = (char **)(sp + 1);
    environ = argv + argc + 1;
}

HK_NOINSTR void hk_init(void)
{
#ifdef __SANITIZE_THREAD__
    /* make SANITIZE=thread: another library's constructor may run a hook
     * before libtsan's own constructor; the plugins' instrumented code
     * needs TSan set up (this file is not instrumented: Makefile). */
    __tsan_init();
#endif
    int expected = 0;
    if (init_state == 2 ||
        !__atomic_compare_exchange_n(&init_state, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;     /* done, or under way in this or another thread */
    hk_io_guard++;              /* start-up's own I/O and allocations pass through */
    find_environment();
    hk_io_resolve();
    hk_flow_resolve();
    hk_io_clock_init();
    hk_config_read();
    hk_set_collecting(-1);      /* unset: HookitStart may turn it off (JPROFOPTS=nostart) */
    int loaded = hk_plugin_load() == 0;
    int plugin_stopped = hk_collecting_now() == 0;
    /* The rest of the start-up calls libc, which may run the program's own
     * instrumented code (its malloc): those calls are ours, not the
     * program's. */
    hk_set_collecting(0);
    hk_io_guard--;
    if (lifecycle_register)
        lifecycle_register(&bridge);
    else
        pthread_atfork(on_pre_fork, on_post_fork_parent, on_post_fork_child);
    hk_rebind_scan();           /* modules loaded before us (we may be a dlopen'ed library's dependency) */
    __atomic_store_n(&hk_hot.initialized, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
    hk_set_collecting(loaded && hk_config.start_on && !plugin_stopped);
}

HK_NOINSTR void hk_finish(int how)
{
    if (__atomic_exchange_n(&finished, 1, __ATOMIC_ACQ_REL))
        return;
    hk_set_collecting(0);
    hk_io_guard++;              /* writing the profile is not the program's I/O */
    if (hk_plugin.finish)
        hk_plugin.finish(how);
    hk_io_guard--;
}

__attribute__((constructor(101))) HK_NOINSTR static void hk_constructor(void)
{
    hk_init();
}

__attribute__((destructor(101))) HK_NOINSTR static void hk_destructor(void)
{
    hk_finish(HOOKIT_END_EXIT);
}
