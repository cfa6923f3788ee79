/*
 * fork and vfork (vfork is run as fork, as libmonitor does: the child
 * gets its own monitoring), forks libc takes internally (daemon...) seen
 * through pthread_atfork, and any other new process (clone) noticed by a
 * pid check.  Parent: pre_fork, post_fork.  Child: post_fork_child and
 * init_process with pre_fork's data; its only thread becomes the main one.
 */
#include "lifecycle/internal.h"

#include <unistd.h>

static LC_TLS int lc_in_fork;       /* inside our fork wrapper */
static LC_TLS void *lc_atfork_data; /* pre_fork's data for a libc-internal fork */

static void lc_reset_child(void)
{
    lc_pid = getpid();
    lc_signal_after_fork_child();
    lc_threads_after_fork_child();
    lc_main_after_fork_child();
    atomic_store(&lc_proc_state, LC_PROC_RUNNING);
}

void lc_after_fork_child(void *fork_data)
{
    lc_reset_child();
    int saved = errno;
    lc_debug("fork child");
    LC_CLIENTS(post_fork_child);
    lc_process_data = monitor_init_process(&lc_argc, lc_argv, fork_data);
    errno = saved;
}

void lc_check_pid(void)
{
    if (LC_UNLIKELY(lc_pid && getpid() != lc_pid) && atomic_load(&lc_proc_state) != LC_PROC_NONE)
        lc_after_fork_child(NULL);
}

void *lc_pre_fork_callbacks(void)
{
    lc_ensure_init();
    lc_check_pid();
    if (atomic_load(&lc_proc_state) == LC_PROC_NONE)
        lc_begin_process(NULL, NULL);
    int saved = errno;
    LC_CLIENTS(pre_fork);
    void *data = monitor_pre_fork();
    errno = saved;
    return data;
}

void lc_post_fork_callbacks(pid_t child, void *data)
{
    int saved = errno;
    LC_CLIENTS(post_fork_parent);
    monitor_post_fork(child, data);
    errno = saved;
}

static pid_t lc_fork(void)
{
    void *data = lc_pre_fork_callbacks();
    lc_in_fork = 1;
    pid_t pid = REAL(fork)();
    lc_in_fork = 0;
    if (pid == 0)
        lc_after_fork_child(data);
    else
        lc_post_fork_callbacks(pid, data);
    return pid;
}

LC_API pid_t LC_WRAPPER(fork)(void)
{
    return lc_fork();
}

LC_API pid_t LC_WRAPPER(vfork)(void)
{
    return lc_fork();
}

void lc_after_real_fork_child(void)
{
    lc_reset_child();
    int saved = errno;
    lc_debug("fork child (monitor_real_fork)");
    LC_CLIENTS(post_fork_child);
    errno = saved;
}

/* As libmonitor: the real fork, no pre_fork/post_fork and no init_process
 * in the child (the child stays monitored: its exit gives fini_process with
 * the parent's data, unless it leaves by monitor_real_exit or
 * monitor_real_execve).  hookit's own clients still see the child. */
LC_API pid_t monitor_real_fork(void)
{
    lc_ensure_init();
    int was = lc_in_fork;
    lc_in_fork = 1;     /* keeps our pthread_atfork handlers out */
    pid_t pid = REAL(fork)();
    lc_in_fork = was;
    if (pid == 0 && atomic_load(&lc_proc_state) != LC_PROC_NONE)
        lc_after_real_fork_child();
    return pid;
}

/* ---- forks inside libc ------------------------------------------------------------------ */
static void lc_atfork_prepare(void)
{
    if (!lc_in_fork && atomic_load(&lc_proc_state) == LC_PROC_RUNNING)
        lc_atfork_data = lc_pre_fork_callbacks();
}

static void lc_atfork_parent(void)
{
    if (!lc_in_fork && atomic_load(&lc_proc_state) == LC_PROC_RUNNING)
        lc_post_fork_callbacks(-1, lc_atfork_data);
}

static void lc_atfork_child(void)
{
    if (!lc_in_fork && atomic_load(&lc_proc_state) == LC_PROC_RUNNING)
        lc_after_fork_child(lc_atfork_data);
}

void lc_fork_init(void)
{
    pthread_atfork(lc_atfork_prepare, lc_atfork_parent, lc_atfork_child);
}

/* daemon() forks inside libc and its parent leaves by _exit: rebuilt on our
 * fork and _exit so both processes get their callbacks. */
#include <fcntl.h>
#include <sys/stat.h>

LC_API int LC_WRAPPER(daemon)(int nochdir, int noclose)
{
    pid_t pid = lc_fork();
    if (pid < 0)
        return -1;
    if (pid > 0) {
        lc_exit_normal();
        lc_fini_library();
        REAL(_exit)(0);
    }
    if (setsid() < 0)
        return -1;
    if (!nochdir && chdir("/") < 0)
        return -1;
    if (!noclose) {
        int fd = open("/dev/null", O_RDWR);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode)) {
            if (fd >= 0)
                close(fd);
            errno = ENODEV;
            return -1;
        }
        dup2(fd, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        if (fd > 2)
            close(fd);
    }
    return 0;
}
