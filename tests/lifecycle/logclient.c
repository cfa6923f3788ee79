/*
 * A logging libmonitor-style client for the lifecycle scenario tests.
 * Every callback appends one line "PID EVENT ARGS" to $LC_LOG (opened and
 * closed around each write: the client must not change the program's fds).
 * LC_CLIENT_SIG=N registers a monitor_sigaction handler for signal N that
 * logs and hands the signal on to the application (LC_CLIENT_CONSUME=1:
 * consumes it).  LC_FINI_THREAD_DELAY_MS=N makes a thread's fini_thread
 * sleep N ms before it logs.  Built as a preloadable .so or linked into a
 * program.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "monitor.h"

#ifdef LC_WITH_INTERNAL
#include "lifecycle/lifecycle.h"
#endif

static const char *log_path;
static int consume;

static void logf_(const char *fmt, ...)
{
    if (!log_path)
        log_path = getenv("HOOKIT_LC_LOG");
    if (!log_path)
        return;
    int saved = errno;
    char buf[600];
    int n = snprintf(buf, sizeof buf, "%d ", (int)getpid());
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2)
        n = sizeof buf - 2;
    buf[n++] = '\n';
    int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        ssize_t w = write(fd, buf, n);
        (void)w;
        close(fd);
    }
    errno = saved;
}

static int client_signal(int sig, siginfo_t *info, void *context)
{
    logf_("client_signal %d", sig);
    return consume ? 0 : 1;
}

#ifdef LC_WITH_INTERNAL
/* The internal client interface, as libhookit's profiler receives it. */
static void lc_init_process(void) { logf_("lc_init_process"); }
static void lc_fini_process(int how, int signo) { logf_("lc_fini_process how=%d sig=%d", how, signo); }
static void lc_init_thread(void) { logf_("lc_init_thread"); }
static void lc_fini_thread(void) { logf_("lc_fini_thread"); }
static void lc_pre_exec(void) { logf_("lc_pre_exec"); }
static void lc_post_fork_child(void) { logf_("lc_post_fork_child"); }
static void lc_exec_failed(void) { logf_("lc_exec_failed"); }
static const struct lc_client test_client = {
    .init_process = lc_init_process, .fini_process = lc_fini_process,
    .init_thread = lc_init_thread, .fini_thread = lc_fini_thread,
    .pre_exec = lc_pre_exec, .post_fork_child = lc_post_fork_child,
    .exec_failed = lc_exec_failed,
};
__attribute__((constructor)) static void register_internal(void)
{
    lifecycle_register(&test_client);
}
#endif

void monitor_init_library(void) { logf_("init_library"); }
void monitor_fini_library(void) { logf_("fini_library"); }

void *monitor_init_process(int *argc, char **argv, void *data)
{
    const char *b = argv && argv[0] ? strrchr(argv[0], '/') : NULL;
    logf_("init_process argc=%d argv0=%s data=%s", *argc,
          b ? b + 1 : (argv && argv[0] ? argv[0] : "?"), data ? "fork" : "none");
    const char *s = getenv("LC_CLIENT_SIG");
    if (s) {
        consume = getenv("LC_CLIENT_CONSUME") != NULL;
        monitor_sigaction(atoi(s), client_signal, 0, NULL);
    }
    return (void *)0x1234;
}

void monitor_fini_process(int how, void *data)
{
    logf_("fini_process how=%d data=%s", how, data == (void *)0x1234 ? "ok" : "bad");
}

void monitor_begin_process_exit(int how) { logf_("begin_process_exit how=%d", how); }
void monitor_at_main(void) { logf_("at_main"); }
void monitor_init_thread_support(void) { logf_("init_thread_support"); }
void *monitor_thread_pre_create(void)
{
    if (getenv("LC_IGNORE_THREADS"))
        return MONITOR_IGNORE_NEW_THREAD;
    return (void *)0x55;
}
void monitor_thread_post_create(void *data)
{
    logf_("post_create data=%s", data == (void *)0x55 ? "ok" : "bad");
}

void *monitor_init_thread(int tid, void *data)
{
    logf_("init_thread num=%d data=%s tid=%ld", tid, data == (void *)0x55 ? "ok" : "bad",
          (long)syscall(SYS_gettid));
    return (void *)(long)(tid + 1000);
}

void monitor_fini_thread(void *data)
{
    /* LC_FINI_THREAD_DELAY_MS: a slow client, whose fini_thread an exit
     * must wait for (threads other than main). */
    const char *delay = getenv("LC_FINI_THREAD_DELAY_MS");
    if (delay && data != (void *)0x1234) {
        struct timespec nap = { atoi(delay) / 1000, (atoi(delay) % 1000) * 1000000L };
        nanosleep(&nap, NULL);
    }
    if (data == (void *)0x1234)         /* main: init_process's data */
        logf_("fini_thread num=main tid=%ld", (long)syscall(SYS_gettid));
    else
        logf_("fini_thread num=%ld tid=%ld", (long)data - 1000, (long)syscall(SYS_gettid));
}

void *monitor_pre_fork(void)
{
    logf_("pre_fork");
    return (void *)0x77;
}

void monitor_post_fork(pid_t child, void *data)
{
    logf_("post_fork child=%s data=%s", child > 0 ? "pid" : "unknown", data == (void *)0x77 ? "ok" : "bad");
}

void monitor_pre_dlopen(const char *path, int flags)
{
    const char *b = path ? strrchr(path, '/') : NULL;
    logf_("pre_dlopen %s", b ? b + 1 : path ? path : "NULL");
}

void monitor_dlopen(const char *path, int flags, void *handle)
{
    const char *b = path ? strrchr(path, '/') : NULL;
    logf_("dlopen %s handle=%s", b ? b + 1 : path ? path : "NULL", handle ? "ok" : "null");
}

void monitor_dlclose(void *handle) { logf_("dlclose"); }
void monitor_post_dlclose(void *handle, int ret) { logf_("post_dlclose ret=%d", ret); }
void monitor_mpi_pre_init(void) { logf_("mpi_pre_init"); }
void monitor_init_mpi(int *argc, char ***argv)
{
    logf_("init_mpi rank=%d size=%d", monitor_mpi_comm_rank(), monitor_mpi_comm_size());
}
void monitor_fini_mpi(void) { logf_("fini_mpi rank=%d size=%d", monitor_mpi_comm_rank(), monitor_mpi_comm_size()); }
void monitor_mpi_post_fini(void) { logf_("mpi_post_fini"); }
