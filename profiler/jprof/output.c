/* Writing the process's profile: hookit.<exe>[.r<rank>].<pid>.prof in
 * HOOKIT_OUTPUT, atomically, never over an existing file: when the name is
 * taken (a flush, or an exec that kept the pid) a counter is added. */
#include "jprof.h"
#include "profile/procinfo.h"
#include "profile/profile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
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

JP_NOINSTR void jp_output_fork_child(void)
{
    profiles_written = 0;
}

JP_NOINSTR static int write_profile(int how);

/* Writing a profile is not the program's I/O, wherever it is called from
 * (a hook carrying out `hookit ctl flush`, say). */
JP_NOINSTR int jp_write_profile(int how)
{
    if (jp_host->io_quiet)
        jp_host->io_quiet(1);
    int rc = write_profile(how);
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

JP_NOINSTR static int write_profile(int how)
{
    int saved = errno;
    uint64_t t0 = jp_now_mono();
    struct profile *p = jp_build_profile(how);
    if (p) {
        /* What building the profile (tree walk and names) cost; the write
         * itself follows and is reported with HOOKIT_DEBUG=1. */
        char ns[24];
        snprintf(ns, sizeof ns, "%llu", (unsigned long long)(jp_now_mono() - t0));
        profile_set_meta(p, "build_ns", ns);
    }
    if (!p) {
        jp_host->log("jprof: out of memory building the profile; none written");
        errno = saved;
        return -1;
    }
    char exe[256], name[600], err[512];
    procinfo_exe_name(exe, sizeof exe);
    int pid = jp_profiled_pid ? jp_profiled_pid : getpid();
    int attempt, first = profiles_written;
    int rc = write_named(p, jp_host->output_dir, exe, pid, name, sizeof name, err, sizeof err, &attempt);
    int write_errno = errno;
    char fallback[64];
    if (rc != 0 && (write_errno == EACCES || write_errno == EPERM || write_errno == EROFS) &&
        fallback_dir(fallback, sizeof fallback) == 0 &&
        write_named(p, fallback, exe, pid, name, sizeof name, err, sizeof err, &attempt) == 0) {
        /* The output directory is not this user's to write (any more): the
         * profile is kept, and the one line says where. */
        profiles_written = attempt + 1;
        jp_host->log("jprof: cannot write profile to %s (%s, user %u): wrote %s/%s instead",
                     jp_host->output_dir, strerror(write_errno), (unsigned)geteuid(), fallback, name);
        profile_free(p);
        errno = saved;
        return 0;
    }
    if (rc == 0)
        profiles_written = attempt + 1;
    if (rc != 0) {
        jp_host->log("jprof: cannot write profile to %s: %s", jp_host->output_dir, err);
    } else if (attempt > first) {
        /* The usual name was taken (a file or a symlink someone put there):
         * say where the profile went instead. */
        char usual[600];
        procinfo_file_name(usual, sizeof usual, exe, jp_rank, pid, first, "prof");
        jp_host->log("jprof: %s/%s already exists (left alone): wrote %s instead",
                     jp_host->output_dir, usual, name);
    } else {
        jp_host->debug_log("jprof: wrote %s/%s in %.3f ms (names and tree walk included)",
                           jp_host->output_dir, name, (double)(jp_now_mono() - t0) / 1e6);
    }
    profile_free(p);
    errno = saved;
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
