/* Writing the process's profile: hookit.<exe>[.r<rank>].<pid>.prof in
 * HOOKIT_OUTPUT, atomically, never over an existing file: when the name is
 * taken (a flush, or an exec that kept the pid) a counter is added. */
#include "profiler/jprof/jprof.h"
#include "output.h"
#include "mpi_job.h"
#include "profile/cost.h"
#include "profile/procinfo.h"
#include "profile/profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TRIES 100

/* Profiles this process wrote: a flush's file and the final one are
 * numbered on from the last, without comment. */
static int profiles_written;

/* The profile written when exit() began (HOOKIT_EV_EXITING), which the
 * final one replaces if the atexit handlers and destructors ran more of
 * the program's code: its directory and name, empty when there is none. */
static char exiting_dir[4096], exiting_name[600];

/* This process made a child (fork, vfork, posix_spawn...): its children
 * may have run the instrumented code even when it did not. */
static int made_children;

/* One profile written at a time: the control thread's flush (control.c)
 * may run while a program thread writes its own (hookit_flush, exec,
 * exit).  Recursive: a handler interrupting a write on the same thread
 * goes on as it always did.  Held across fork, so that the child's copy
 * of the writer's state is whole. */
static pthread_mutex_t write_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

JP_NOINSTR void jp_output_fork_prepare(void)
{
    pthread_mutex_lock(&write_lock);
}

JP_NOINSTR void jp_output_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    write_lock = fresh;
    profiles_written = 0;
    exiting_name[0] = 0;
    made_children = 0;
}

JP_NOINSTR void jp_output_forked(void)
{
    made_children = 1;
    pthread_mutex_unlock(&write_lock);
}

/* Whether any instrumented function ran in this process (inherited frames
 * of a fork child carry no calls of their own). */
JP_NOINSTR static int ran_code(const struct profile *p)
{
    for (uint32_t t = 0; t < p->nthreads; t++)
        for (uint32_t i = 0; i < p->threads[t].nnodes; i++)
            if (p->threads[t].nodes[i].calls)
                return 1;
    return 0;
}

/* HOOKIT_ALL_PROCESSES=0 (what `hookit run` sets unless --all-processes):
 * a process that ran no instrumented code writes no profile (a shell of
 * `hookit run -- sh -c ...`).  The process `hookit run` started
 * (HOOKIT_RUN_PID, kept across exec) says why there is none when it made
 * no children that could have run the code instead. */
JP_NOINSTR static int skip_empty(const struct profile *p, int how)
{
    const char *all = getenv("HOOKIT_ALL_PROCESSES");
    if (!all || strcmp(all, "0") != 0 || ran_code(p) || how == 0)
        return 0;
    const char *run_pid = getenv("HOOKIT_RUN_PID");
    if (how != HOOKIT_END_EXEC && !made_children && run_pid && atoi(run_pid) == getpid()) {
        char exe[256];
        procinfo_exe_name(exe, sizeof exe);
        jp_host->log("no instrumented function ran: was %s built with -finstrument-functions? "
                     "(no profile written)", exe);
    } else {
        jp_host->debug_log("jprof: no instrumented function ran here: no profile written");
    }
    return 1;
}

JP_NOINSTR static int write_profile(int how);

/* Writing a profile is not the program's I/O, wherever it is called from
 * (a hook carrying out `hookit ctl flush`, say). */
JP_NOINSTR int jp_write_profile(int how)
{
    if (jp_host->io_quiet)
        jp_host->io_quiet(1);
    pthread_mutex_lock(&write_lock);
    int rc = write_profile(how);
    pthread_mutex_unlock(&write_lock);
    if (jp_host->io_quiet)
        jp_host->io_quiet(0);
    return rc;
}

/* A directory the current user can write when the output directory is not
 * (a process that changed user, a server dropping root for nobody):
 * /tmp/hookit-EUID, made 0700, used only when it is a real directory of
 * that user.  0 and the path in dir, or -1. */
JP_NOINSTR static int fallback_dir(char *dir, size_t size)
{
    snprintf(dir, size, "/tmp/hookit-%u", (unsigned)geteuid());
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
        return -1;
    return 0;
}

JP_NOINSTR static int write_named(const struct profile *p, const char *dir, const char *exe, int pid,
                                  char *name, size_t size, char *err, size_t errlen, int *attempt)
{
    int rc = -1, first = profiles_written;
    for (*attempt = first; *attempt < first + MAX_TRIES; (*attempt)++) {
        procinfo_file_name(name, size, exe, jp_rank, pid, *attempt, "prof");
        rc = profile_write_file(p, dir, name, err, errlen);
        if (rc == 0 || errno != EEXIST)
            break;
    }
    return rc;
}

JP_NOINSTR static int write_out(const struct profile *p, int how, uint64_t t0);

/* A profile built elsewhere (the rank's own at MPI_Finalize, mpi_job.c),
 * written under the process's usual name like a flush. */
JP_NOINSTR int jp_write_built(const struct profile *p)
{
    int saved = errno;
    if (jp_host->io_quiet)
        jp_host->io_quiet(1);
    pthread_mutex_lock(&write_lock);
    int rc = write_out(p, 0, hk_mono_ns());
    pthread_mutex_unlock(&write_lock);
    if (jp_host->io_quiet)
        jp_host->io_quiet(0);
    errno = saved;
    return rc;
}

JP_NOINSTR static int write_profile(int how)
{
    int saved = errno;
    if (jp_mpi_job_skip_write(how))
        return 0;
    uint64_t t0 = hk_mono_ns();
    struct profile *p = jp_build_profile(how == JP_END_EXITING ? HOOKIT_END_EXIT : how);
    if (p) {
        /* What building the profile (tree walk and names) cost; the write
         * itself follows and is reported with HOOKIT_DEBUG=1. */
        char ns[24];
        snprintf(ns, sizeof ns, "%llu", (unsigned long long)(hk_mono_ns() - t0));
        profile_set_meta(p, "build_ns", ns);
    }
    if (!p) {
        jp_host->log("jprof: out of memory building the profile; none written");
        errno = saved;
        return -1;
    }
    if (skip_empty(p, how)) {
        profile_free(p);
        errno = saved;
        return 0;
    }
    int rc = write_out(p, how, t0);
    profile_free(p);
    errno = saved;
    return rc;
}

/* `hookit run`'s own process (HOOKIT_RUN_PID, kept across exec) says at
 * its end, once, when the hooks took a large share of the run, naming the
 * profile to give `hookit advise` (profile/cost.h; docs/cost.md). */
JP_NOINSTR static void say_overhead(const struct profile *p, int how, const char *dir, const char *name)
{
    static int said;
    const char *run_pid = getenv("HOOKIT_RUN_PID");
    char path[4800], line[1024];
    if (said || (how != JP_END_EXITING && how != HOOKIT_END_EXIT && how != HOOKIT_END_SIGNAL) || !run_pid
        || atoi(run_pid) != getpid())
        return;
    said = 1;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (cost_overhead_line(p, path, line, sizeof line))
        jp_host->log("%s", line);
}

JP_NOINSTR static int write_out(const struct profile *p, int how, uint64_t t0)
{
    char exe[256], name[600], err[512];
    procinfo_exe_name(exe, sizeof exe);
    int pid = jp_profiled_pid ? jp_profiled_pid : getpid();
    int attempt, first = profiles_written;
    int rc;
    if (how == HOOKIT_END_EXIT && exiting_name[0]) {
        rc = profile_replace_file(p, exiting_dir, exiting_name, err, sizeof err);
        if (rc != 0)
            jp_host->log("jprof: cannot write profile to %s: %s", exiting_dir, err);
        else
            jp_host->debug_log("jprof: completed %s/%s after the destructors", exiting_dir, exiting_name);
        return rc;
    }
    const char *dir = jp_host->output_dir;
    rc = write_named(p, dir, exe, pid, name, sizeof name, err, sizeof err, &attempt);
    int write_errno = errno;
    /* The output directory failed (full, gone, made read-only since the
     * start): the fallback directory chosen at start takes the profile; and
     * when this user may not write there either (a process that changed
     * user), a directory of its own.  The one line says both what failed
     * and where the profile is. */
    const char *fallback = HOOKIT_HOST_HAS(jp_host, fallback_dir) ? jp_host->fallback_dir : NULL;
    char first_err[600] = "", own[64];
    if (rc != 0 && fallback && *fallback && strcmp(fallback, dir) != 0) {
        snprintf(first_err, sizeof first_err, "%s", err);
        dir = fallback;
        rc = write_named(p, dir, exe, pid, name, sizeof name, err, sizeof err, &attempt);
        if (rc != 0)
            write_errno = errno;
    }
    if (rc != 0 && (write_errno == EACCES || write_errno == EPERM || write_errno == EROFS) &&
        fallback_dir(own, sizeof own) == 0) {
        if (!first_err[0])
            snprintf(first_err, sizeof first_err, "%.500s (user %u)", err, (unsigned)geteuid());
        dir = own;
        rc = write_named(p, dir, exe, pid, name, sizeof name, err, sizeof err, &attempt);
    }
    if (rc == 0) {
        say_overhead(p, how, dir, name);
        profiles_written = attempt + 1;
        if (how == JP_END_EXITING) {
            snprintf(exiting_dir, sizeof exiting_dir, "%s", dir);
            snprintf(exiting_name, sizeof exiting_name, "%s", name);
        }
    }
    if (rc != 0) {
        jp_host->log("jprof: cannot write profile to %s: %s", jp_host->output_dir,
                     first_err[0] ? first_err : err);
    } else if (first_err[0]) {
        jp_host->log("jprof: cannot write profile to %s: %s; wrote %s/%s instead",
                     jp_host->output_dir, first_err, dir, name);
    } else if (HOOKIT_HOST_HAS(jp_host, output_fallback) && jp_host->output_fallback) {
        jp_host->log("jprof: wrote %s/%s", dir, name);
    } else if (attempt > first) {
        /* The usual name was taken (a file or a symlink someone put there):
         * say where the profile went instead. */
        char usual[600];
        procinfo_file_name(usual, sizeof usual, exe, jp_rank, pid, first, "prof");
        jp_host->log("jprof: %s/%s already exists (left alone): wrote %s instead",
                     jp_host->output_dir, usual, name);
    } else {
        jp_host->debug_log("jprof: wrote %s/%s in %.3f ms (names and tree walk included)",
                           jp_host->output_dir, name, (double)(hk_mono_ns() - t0) / 1e6);
    }
    return rc;
}

/* Wait for the helper until the deadline; kill it when it is too slow. */
JP_NOINSTR static int wait_bounded(pid_t child, int timeout_ms)
{
    int status = 0;
    int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
    if (pidfd >= 0) {
        struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
        int ready;
        do
            ready = poll(&pfd, 1, timeout_ms);
        while (ready < 0 && errno == EINTR);
        close(pidfd);
        if (ready == 1 && waitpid(child, &status, __WALL) == child)
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    } else {
        /* No pidfd (old kernel): poll the child's state every millisecond. */
        struct timespec tick = { 0, 1000000 };
        for (int waited = 0; waited < timeout_ms; waited++) {
            if (waitpid(child, &status, WNOHANG | __WALL) == child)
                return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            nanosleep(&tick, NULL);
        }
    }
    kill(child, SIGKILL);
    waitpid(child, &status, __WALL);
    return -1;
}

/* The process is dying by a signal, perhaps in the middle of malloc with
 * its lock held: writing here could deadlock and keep it from dying.  A
 * copy of the process (clone without SIGCHLD, so the program's handlers
 * never see it) resolves names and writes the profile; this thread waits
 * a bounded time, then lets the death proceed either way. */
JP_NOINSTR int jp_write_profile_isolated(int how)
{
    int saved = errno;
    pid_t self = getpid(), parent = getppid();
    pid_t child = (pid_t)syscall(SYS_clone, 0, NULL, NULL, NULL, NULL);
    if (child == 0) {
        /* A group of its own: a launcher that ends a job kills each rank's
         * process group (Open MPI's mpirun: SIGTERM, then SIGKILL as soon as
         * any rank is gone), which must not take the writer with it. */
        syscall(SYS_setpgid, 0, 0);
        pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
        write_lock = fresh;     /* the control thread may have held it: it is not here */
        jp_profiled_pid = self;
        jp_profiled_ppid = parent;
        /* The raw system call: no exit wrapper may take this copy for the process. */
        syscall(SYS_exit_group, jp_write_profile(how) == 0 ? 0 : 1);
    }
    int rc = child > 0 ? wait_bounded(child, (int)jp_opt.death_timeout_ms) : jp_write_profile(how);
    if (child > 0 && rc < 0)
        jp_host->log("jprof: writing the profile of the dying process took over %u ms; "
                     "abandoned", jp_opt.death_timeout_ms);
    errno = saved;
    return rc == 0 ? 0 : -1;
}
