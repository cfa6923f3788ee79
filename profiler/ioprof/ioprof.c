/* libioprof: the IOProf-style event log, one line per I/O call.
 *
 *   HOOKIT_PROFILER=libioprof.so ./app   ->   ioprof.<exe>.<pid>.log
 *
 * The log is written as ioprof.<exe>.<pid>.log.part while the process runs
 * and renamed to ioprof.<exe>.<pid>.log after its end-of-log line, so a
 * finished log is recognisable by its name alone (docs/io.md has the
 * format).  Lines are buffered and written at least every 100 ms of I/O
 * activity, so a monitor polling the .part file sees a running program's
 * I/O as it happens.  The plugin asks for no function events: a program
 * need not be instrumented at all (`hookit run -p libioprof.so -- PROG`). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <hookit/profiler.h>
#include "common/spin.h"
#include "profile/ioplog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINSTR __attribute__((no_instrument_function))
#define EXPORT __attribute__((visibility("default")))

HOOKIT_PLUGIN_ABI;

#define BUF_SIZE (64 * 1024)
#define MAX_SEEN (1u << 20)

static const struct hookit_host *host;
static int log_fd = -1;
static char part_path[4300], final_path[4200];
static char buf[BUF_SIZE];
static size_t used;
static volatile int lock;
static uint64_t last_flush, flush_every;
static double ticks_per_ns = 1.0;
static unsigned generation;             /* logs this pid has written (exec failed) */
static unsigned char seen[MAX_SEEN / 8]; /* file ids whose path was logged */

/* Under the lock. */
NOINSTR static void flush_locked(void)
{
    size_t done = 0;
    while (log_fd >= 0 && done < used) {
        ssize_t w = write(log_fd, buf + done, used - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    used = 0;
}

/* Append text (under the lock). */
NOINSTR static void put(const char *s, size_t n)
{
    if (used + n > BUF_SIZE)
        flush_locked();
    if (n > BUF_SIZE)
        n = BUF_SIZE;
    memcpy(buf + used, s, n);
    used += n;
}

/* ---- the file ----------------------------------------------------------------------- */
NOINSTR static void exe_name(char *exe, size_t size, char *base, size_t bsize)
{
    ssize_t n = readlink("/proc/self/exe", exe, size - 1);
    exe[n > 0 ? n : 0] = 0;
    const char *slash = strrchr(exe, '/');
    snprintf(base, bsize, "%.200s", slash ? slash + 1 : exe[0] ? exe : "unknown");
}

NOINSTR static void header(const char *exe)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ticks = host->io_now();
    ticks_per_ns = host->io_ticks_per_ns();
    flush_every = (uint64_t)(100e6 * ticks_per_ns);
    last_flush = ticks;
    char args[8192];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t len = fd >= 0 ? read(fd, args, sizeof args - 1) : -1;
    if (fd >= 0)
        close(fd);
    args[len > 0 ? len : 0] = 0;
    struct ioplog_start start = {
        .wall_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec,
        .ticks = ticks,
        .ticks_per_sec = ticks_per_ns * 1e9,
        .exe = exe,
        .args = args,
        .args_len = len > 0 ? (size_t)len : 0,
        .pid = (int)getpid(),
        .ppid = (int)getppid(),
    };
    ioplog_write_header(put, &start);
    flush_locked();
}

NOINSTR static void open_log(void)
{
    char exe[4096], base[256];
    exe_name(exe, sizeof exe, base, sizeof base);
    const char *dir = host->output_dir ? host->output_dir : ".";
    for (int tries = 0; tries < 100; tries++, generation++) {
        ioplog_file_name(final_path, sizeof final_path, dir, base, (int)getpid(), generation);
        snprintf(part_path, sizeof part_path, "%s.part", final_path);
        if (access(final_path, F_OK) == 0)
            continue;
        log_fd = open(part_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (log_fd >= 0 || errno != EEXIST)
            break;
    }
    if (log_fd < 0) {
        host->log("ioprof: cannot create %s: %s; no I/O log", part_path, strerror(errno));
        return;
    }
    generation++;
    memset(seen, 0, sizeof seen);
    header(exe);
}

/* The end-of-log line, then the name that says the log is complete. */
NOINSTR static void close_log(const char *how)
{
    if (log_fd < 0)
        return;
    char line[256];
    double rate = host->io_ticks_per_ns();
    int n = ioplog_end_line(line, sizeof line, how, host->io_now(), rate * 1e9);
    put(line, (size_t)n);
    flush_locked();
    close(log_fd);
    log_fd = -1;
    if (link(part_path, final_path) == 0)
        unlink(part_path);
    else
        rename(part_path, final_path);
}

/* ---- events ------------------------------------------------------------------------- */
NOINSTR static void on_io(const struct hookit_io *io)
{
    char line[IOPLOG_LINE_MAX];
    const char *p = NULL;
    if (io->path && (io->op == HOOKIT_IO_OPEN || !io->file ||
                     (io->file < MAX_SEEN && !(seen[io->file / 8] & (1u << (io->file % 8))))))
        p = io->path;
    if (p && io->file && io->file < MAX_SEEN)
        seen[io->file / 8] |= (unsigned char)(1u << (io->file % 8));
    int n = ioplog_event_line(line, sizeof line, io, (long)syscall(SYS_gettid), p);
    if (n < 0)
        return;
    hk_spin_lock(&lock);
    put(line, (size_t)n);
    if (io->t1 - last_flush >= flush_every || used > BUF_SIZE - IOPLOG_LINE_MAX) {
        flush_locked();
        last_flush = io->t1;
    }
    hk_spin_unlock(&lock);
}

EXPORT NOINSTR int HookitStart(const struct hookit_host *h, struct hookit_plugin *plugin)
{
    if (h->abi_version != HOOKIT_ABI_VERSION || h->size < sizeof *h || !h->io_now)
        return -1;
    host = h;
    hk_spin_lock(&lock);
    open_log();
    hk_spin_unlock(&lock);
    plugin->abi_version = HOOKIT_ABI_VERSION;
    plugin->caps = HOOKIT_CAP_IO | HOOKIT_CAP_FORK | HOOKIT_CAP_CONTROL;
    plugin->name = "ioprof";
    return 0;
}

EXPORT NOINSTR void HookitEvent(const struct hookit_event *ev)
{
    switch (ev->type) {
    case HOOKIT_EV_IO:
        if (ev->io && log_fd >= 0)
            on_io(ev->io);
        break;
    case HOOKIT_EV_FORK_PREPARE:
    case HOOKIT_EV_FLUSH:
        hk_spin_lock(&lock);
        flush_locked();
        hk_spin_unlock(&lock);
        break;
    case HOOKIT_EV_FORK_PARENT: {
        /* A marker where the child's log begins (its header names us). */
        char line[64];
        int n = ioplog_fork_line(line, sizeof line, host->io_now());
        hk_spin_lock(&lock);
        put(line, (size_t)n);
        hk_spin_unlock(&lock);
        break;
    }
    case HOOKIT_EV_FORK_CHILD:
        /* The parent's log is the parent's: the child starts its own. */
        lock = 0;
        used = 0;
        if (log_fd >= 0)
            close(log_fd);
        log_fd = -1;
        generation = 0;
        hk_spin_lock(&lock);
        open_log();
        hk_spin_unlock(&lock);
        break;
    case HOOKIT_EV_EXEC:
        hk_spin_lock(&lock);
        close_log("exec");
        hk_spin_unlock(&lock);
        break;
    case HOOKIT_EV_EXEC_FAILED:
        hk_spin_lock(&lock);
        open_log();
        hk_spin_unlock(&lock);
        break;
    default:
        break;
    }
}

EXPORT NOINSTR void HookitFinish(int how)
{
    hk_spin_lock(&lock);
    close_log(how == HOOKIT_END_SIGNAL ? "signal" : how == HOOKIT_END_EXEC ? "exec" : "exit");
    hk_spin_unlock(&lock);
}
