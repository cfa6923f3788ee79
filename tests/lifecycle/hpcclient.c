/*
 * An hpcrun-shaped libmonitor client for the contract tests: it uses the
 * calls HPCToolkit's hpcrun makes, the way hpcrun makes them, and logs what
 * it sees to $HOOKIT_LC_LOG ("PID EVENT key=value...", the logclient's
 * format, so lcscen.check_order applies).
 *
 *   HPC_SAMPLE=1   a SIGPROF sampler through monitor_sigaction and
 *                  ITIMER_PROF; every sample brackets its work with
 *                  monitor_block_shootdown()/monitor_unblock_shootdown() and
 *                  drops the sample when block_shootdown says the process
 *                  is exiting (hpcrun's pattern)
 *   HPC_HELPER=1   launch a helper from init_process with monitor_real_fork
 *                  + monitor_real_execve (hpcrun's fnbounds server), reaped
 *                  in fini_process
 *   HPC_ABORT=1    monitor_real_abort() at main
 *   HPC_IGNORE=fn  monitor_thread_pre_create ignores threads whose start
 *                  routine is fn (found through monitor_get_new_thread_info)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "monitor.h"

extern char **environ;
static const char *log_path;
static atomic_long samples, dropped;
static pid_t helper = -1;

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

static const char *sym(void *addr)
{
    Dl_info info;
    if (addr && dladdr(addr, &info) && info.dli_sname)
        return info.dli_sname;
    return addr ? "?" : "NULL";
}

static long tid(void) { return (long)syscall(SYS_gettid); }

/* hpcrun's sample handler: no work once the process is exiting. */
static int sampler(int sig, siginfo_t *info, void *context)
{
    if (monitor_block_shootdown()) {
        monitor_unblock_shootdown();
        atomic_fetch_add(&dropped, 1);
        return 0;
    }
    atomic_fetch_add(&samples, 1);
    monitor_unblock_shootdown();
    return 0;
}

void monitor_init_library(void) { logf_("init_library"); }
void monitor_fini_library(void) { logf_("fini_library"); }

void monitor_start_main_init(void)
{
    logf_("start_main_init main=%s", sym(monitor_get_addr_main()));
}

void *monitor_init_process(int *argc, char **argv, void *data)
{
    const char *b = argv && argv[0] ? strrchr(argv[0], '/') : NULL;
    logf_("init_process argc=%d argv0=%s data=%s", *argc, b ? b + 1 : argv[0],
          data ? "fork" : "none");
    if (getenv("HPC_SAMPLE")) {
        int rc = monitor_sigaction(SIGPROF, sampler, 0, NULL);
        struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
        setitimer(ITIMER_PROF, &it, NULL);
        logf_("sampler rc=%d", rc);
    }
    /* Never twice, whatever the layer does wrong: not again in a child
     * (a copy of this flag) nor in the helper (no HPC_HELPER there). */
    static int launching;
    if (getenv("HPC_HELPER") && !launching++) {
        helper = monitor_real_fork();
        if (helper == 0) {
            char *args[] = { "sh", "-c", "echo helper:${LD_PRELOAD:-unmonitored}", NULL };
            char *env[] = { "PATH=/usr/bin:/bin", NULL };
            for (char **e = environ; *e; e++)
                if (!strncmp(*e, "LD_PRELOAD=", 11))
                    env[1] = *e;        /* monitor_real_execve must drop it */
            char *full[] = { env[0], env[1], NULL };
            monitor_real_execve("/bin/sh", args, full);
            monitor_real_exit(127);
        }
        logf_("helper launched=%d", helper > 0);
    }
    return (void *)0x1234;
}

void monitor_at_main(void)
{
    void *ret = __builtin_return_address(0);
    struct monitor_thread_info mti;
    char here;
    char *bottom = monitor_stack_bottom();
    logf_("at_main process_bottom=%d thread_bottom=%d info=%d start=%s stack=%d num=%d",
          monitor_unwind_process_bottom_frame(ret), monitor_unwind_thread_bottom_frame(ret),
          monitor_get_new_thread_info(&mti), sym(monitor_get_addr_thread_start()),
          bottom && bottom > &here && bottom - &here < (1 << 20), monitor_get_thread_num());
    if (getenv("HPC_ABORT"))
        monitor_real_abort();
}

void monitor_begin_process_exit(int how) { logf_("begin_process_exit how=%d", how); }

void monitor_fini_process(int how, void *data)
{
    if (getenv("HPC_SAMPLE")) {
        struct itimerval off = { { 0, 0 }, { 0, 0 } };
        setitimer(ITIMER_PROF, &off, NULL);
        logf_("samples taken=%ld dropped=%ld", atomic_load(&samples), atomic_load(&dropped));
    }
    if (helper > 0) {
        int st = 0;
        pid_t w = waitpid(helper, &st, 0);
        logf_("helper reaped=%d status=%d", w == helper, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
    logf_("fini_process how=%d data=%s block=%d", how, data == (void *)0x1234 ? "ok" : "bad",
          monitor_block_shootdown());
    monitor_unblock_shootdown();
}

void *monitor_pre_fork(void) { logf_("pre_fork"); return (void *)0x77; }
void monitor_post_fork(pid_t child, void *data)
{
    logf_("post_fork child=%s data=%s", child > 0 ? "pid" : "unknown", data == (void *)0x77 ? "ok" : "bad");
}

void monitor_init_thread_support(void) { logf_("init_thread_support"); }

void *monitor_thread_pre_create(void)
{
    struct monitor_thread_info mti;
    memset(&mti, 0, sizeof mti);
    int rc = monitor_get_new_thread_info(&mti);
    const char *start = sym(mti.mti_start_routine);
    logf_("pre_create info=%d start=%s caller=%s", rc, start, sym(mti.mti_create_return_addr));
    const char *ign = getenv("HPC_IGNORE");
    if (ign && !strcmp(ign, start))
        return MONITOR_IGNORE_NEW_THREAD;
    return (void *)0x55;
}

void monitor_thread_post_create(void *data)
{
    struct monitor_thread_info mti;
    /* signal 0: only checks the threads can be signalled */
    logf_("post_create info=%d data=%s broadcast=%d", monitor_get_new_thread_info(&mti),
          data == (void *)0x55 ? "ok" : "bad", monitor_broadcast_signal(0));
}

void *monitor_init_thread(int num, void *data)
{
    void *ret = __builtin_return_address(0);
    char here;
    char *bottom = monitor_stack_bottom();
    logf_("init_thread num=%d data=%s tid=%ld start=%s thread_bottom=%d process_bottom=%d "
          "stack=%d bottom=%p getnum=%d",
          num, data == (void *)0x55 ? "ok" : "bad", tid(), sym(monitor_get_addr_thread_start()),
          monitor_unwind_thread_bottom_frame(ret), monitor_unwind_process_bottom_frame(ret),
          bottom && bottom > &here && bottom - &here < (1 << 20), (void *)bottom,
          monitor_get_thread_num());
    return (void *)(long)(num + 1000);
}

void monitor_fini_thread(void *data)
{
    if (data == (void *)0x1234)
        logf_("fini_thread num=main tid=%ld", tid());
    else
        logf_("fini_thread num=%ld tid=%ld", (long)data - 1000, tid());
}

void monitor_pre_dlopen(const char *path, int flags) {}
void monitor_dlopen(const char *path, int flags, void *handle)
{
    logf_("dlopen %s handle=%s", path ? path : "NULL", handle ? "ok" : "null");
}
