/*
 * launch: runs one command for bench/run and reports what it cost.
 *
 * Why not from Python directly: a child's peak RSS (ru_maxrss) keeps the
 * high-water mark of every memory image the process had, including the
 * copy of its parent it was forked from, so a child of the Python bench
 * would never report less than Python's own ~15 MB.  This launcher is
 * tiny, so the peak RSS it reports is the command's own.
 *
 * Usage: launch REPORT_FILE PROGRAM ARGS...
 * Runs PROGRAM (stdin, stdout, stderr inherited), waits for it with wait4
 * and writes one line to REPORT_FILE:
 *     status=<wait status> wall_ns=<fork to reaped> cpu_ns=<user+system>
 *     maxrss_kb=<peak RSS> reaped_ns=<CLOCK_MONOTONIC when reaped>
 * cpu_ns and maxrss_kb cover PROGRAM and the children it waited for.
 * Exits 0 when the report was written (whatever PROGRAM's status), 127
 * when PROGRAM could not be started.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long tv_ns(struct timeval tv)
{
    return tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: launch REPORT_FILE PROGRAM ARGS...\n");
        return 2;
    }
    long long t0 = mono_ns();
    pid_t pid = fork();
    if (pid < 0) {
        perror("launch: fork");
        return 127;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror("launch: exec");
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid) {
        perror("launch: wait4");
        return 127;
    }
    long long t1 = mono_ns();
    FILE *f = fopen(argv[1], "w");
    if (!f) {
        perror("launch: report file");
        return 127;
    }
    fprintf(f, "status=%d wall_ns=%lld cpu_ns=%lld maxrss_kb=%ld reaped_ns=%lld\n", status,
            t1 - t0, tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime), ru.ru_maxrss, t1);
    return fclose(f) == 0 ? 0 : 127;
}
