/*
 * A libmonitor-style client in the spirit of papiex: per-thread CPU and
 * wall time, reported when the process ends.  It uses only monitor.h, so
 * it builds unchanged against libmonitor too.
 *
 *   gcc -shared -fPIC -I<hookit>/include -o libmyclient.so monitor_client.c
 *   hookit run --client ./libmyclient.so -- ./app
 *   (or LD_PRELOAD=./libmyclient.so:libhookit.so ./app, or link it into app)
 *
 * The report goes to stderr, or to the file named by MONITOR_CLIENT_OUTPUT
 * (".PID" appended, one file per process).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "monitor.h"

#define MAX_THREADS 1024

struct thread_stats {
    int num;
    double wall_start, wall, cpu;
};

static struct thread_stats threads[MAX_THREADS];
static int nthreads;                    /* slots used, main thread is slot 0 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int forks, dlopens;
static double process_start;

static double now(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *how_name(int how)
{
    return how == MONITOR_EXIT_SIGNAL ? "killed by a signal" :
           how == MONITOR_EXIT_EXEC ? "replaced by exec" : "exited";
}

/* Process start (and again in a fork child, with pre_fork's data). */
void *monitor_init_process(int *argc, char **argv, void *data)
{
    nthreads = 1;
    forks = dlopens = 0;
    process_start = now(CLOCK_MONOTONIC);
    threads[0] = (struct thread_stats){ .num = 0, .wall_start = process_start };
    return &threads[0];
}

/* Thread start, inside the new thread: its own slot, returned as its data. */
void *monitor_init_thread(int tid, void *data)
{
    pthread_mutex_lock(&lock);
    struct thread_stats *t = nthreads < MAX_THREADS ? &threads[nthreads++] : NULL;
    pthread_mutex_unlock(&lock);
    if (t)
        *t = (struct thread_stats){ .num = tid, .wall_start = now(CLOCK_MONOTONIC) };
    return t;
}

/* Thread end, inside the ending thread: its CPU clock is still readable. */
void monitor_fini_thread(void *data)
{
    struct thread_stats *t = data;
    if (!t)
        return;
    t->cpu = now(CLOCK_THREAD_CPUTIME_ID);
    t->wall = now(CLOCK_MONOTONIC) - t->wall_start;
}

void *monitor_pre_fork(void)
{
    forks++;
    return NULL;
}

void monitor_dlopen(const char *path, int flags, void *handle)
{
    dlopens++;
}

/* Process end: every other thread has run monitor_fini_thread by now. */
void monitor_fini_process(int how, void *data)
{
    struct thread_stats *main_stats = data;
    main_stats->cpu = now(CLOCK_THREAD_CPUTIME_ID);
    main_stats->wall = now(CLOCK_MONOTONIC) - process_start;

    FILE *out = stderr;
    const char *file = getenv("MONITOR_CLIENT_OUTPUT");
    char path[4096];
    if (file) {
        snprintf(path, sizeof path, "%s.%d", file, (int)getpid());
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        out = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!out)
            return;
    }
    fprintf(out, "monitor_client[%d]: %s; %d thread(s), %d fork(s), %d dlopen(s)\n",
            (int)getpid(), how_name(how), nthreads, forks, dlopens);
    for (int i = 0; i < nthreads; i++)
        fprintf(out, "monitor_client[%d]:   thread %d: cpu %.6f s, wall %.6f s\n",
                (int)getpid(), threads[i].num, threads[i].cpu, threads[i].wall);
    if (out != stderr)
        fclose(out);
}
