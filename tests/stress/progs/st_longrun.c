/* Stress: runs SECONDS calling instrumented functions along a few paths and
 * creating a short thread now and then; samples its resident set size once
 * a second.  stderr: "rss_kb FIRST LAST MAX" (first sample after 1 s).
 *   st_longrun SECONDS */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) static long a(long x) { return x * 3 + 1; }
__attribute__((noinline)) static long b(long x) { return a(x) ^ a(x >> 1); }
__attribute__((noinline)) static long c(long x) { return x & 1 ? a(x) : b(x); }

static long rss_kb(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss * 4;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *brief(void *arg) { return (void *)c((long)arg); }

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 600;
    double t0 = now(), next = t0 + 1;
    long x = 0, first = 0, last = 0, max = 0, iter = 0;
    while (now() - t0 < secs) {
        for (int i = 0; i < 10000; i++)
            x += c(x + i);
        if (++iter % 100 == 0) {
            pthread_t t;
            pthread_create(&t, NULL, brief, (void *)x);
            pthread_join(t, NULL);
        }
        if (now() >= next) {
            last = rss_kb();
            if (!first)
                first = last;
            if (last > max)
                max = last;
            next += 1;
        }
    }
    printf("longrun done\n");
    fprintf(stderr, "rss_kb %ld %ld %ld\n", first, last, max);
    return (int)(x & 0);
}
