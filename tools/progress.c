/*
 * Progress of a long `hookit export` on a terminal.  A 1,000,000-context
 * profile takes seconds to write as JSON or pprof, and a user at a
 * terminal should see that something happens.  The formats know nothing
 * of it: their output goes through a stream that counts the bytes, and a
 * thread of ours looks at the count every REFRESH_MS, so the line also
 * moves (its time) while a format builds or compresses before writing.
 */
#include "tools/progress.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define SHOW_AFTER_NS 1000000000ull     /* nothing for exports shorter than 1 s */
#define REFRESH_MS 250

struct progress {
    FILE *out, *stream;
    const char *what;
    uint64_t written;           /* bytes, updated by the writing thread */
    int failed;                 /* a write to out failed */
    struct timespec t0;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int done, shown;
};

static uint64_t since_ns(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)(now.tv_sec - t0->tv_sec) * 1000000000ull + (uint64_t)now.tv_nsec -
           (uint64_t)t0->tv_nsec;
}

static ssize_t counting_write(void *cookie, const char *buf, size_t size)
{
    struct progress *pg = cookie;
    size_t n = fwrite(buf, 1, size, pg->out);
    __atomic_add_fetch(&pg->written, n, __ATOMIC_RELAXED);
    if (n < size) {
        pg->failed = 1;
        return n ? (ssize_t)n : -1;
    }
    return (ssize_t)n;
}

/* The line, rewritten in place (spaces cover a longer one before), and
 * ended with the total. */
static void show(struct progress *pg, int final)
{
    uint64_t bytes = __atomic_load_n(&pg->written, __ATOMIC_RELAXED);
    fprintf(stderr, "\rhookit: export: %s: %.1f MB %s %.1f s%s", pg->what, (double)bytes / 1e6,
            final ? "in" : "written,", (double)since_ns(&pg->t0) / 1e9, final ? "\n" : "    ");
    fflush(stderr);
    pg->shown = 1;
}

static void *ticker(void *arg)
{
    struct progress *pg = arg;
    pthread_mutex_lock(&pg->lock);
    while (!pg->done) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += REFRESH_MS * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&pg->wake, &pg->lock, &until);
        if (!pg->done && since_ns(&pg->t0) >= SHOW_AFTER_NS)
            show(pg, 0);
    }
    pthread_mutex_unlock(&pg->lock);
    return NULL;
}

struct progress *progress_start(FILE *out, const char *what)
{
    if (!isatty(STDERR_FILENO))
        return NULL;
    struct progress *pg = calloc(1, sizeof *pg);
    if (!pg)
        return NULL;
    pg->out = out;
    pg->what = what;
    clock_gettime(CLOCK_MONOTONIC, &pg->t0);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&pg->wake, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&pg->lock, NULL);
    pg->stream = fopencookie(pg, "w", (cookie_io_functions_t){ .write = counting_write });
    if (!pg->stream || pthread_create(&pg->thread, NULL, ticker, pg) != 0) {
        if (pg->stream)
            fclose(pg->stream);
        pthread_cond_destroy(&pg->wake);
        pthread_mutex_destroy(&pg->lock);
        free(pg);
        return NULL;
    }
    return pg;
}

FILE *progress_stream(struct progress *pg)
{
    return pg->stream;
}

int progress_end(struct progress *pg)
{
    int rc = fclose(pg->stream) == 0 && !pg->failed ? 0 : -1;
    pthread_mutex_lock(&pg->lock);
    pg->done = 1;
    pthread_cond_signal(&pg->wake);
    pthread_mutex_unlock(&pg->lock);
    pthread_join(pg->thread, NULL);
    if (pg->shown)
        show(pg, 1);
    pthread_cond_destroy(&pg->wake);
    pthread_mutex_destroy(&pg->lock);
    free(pg);
    return rc;
}
