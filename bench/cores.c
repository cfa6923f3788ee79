/*
 * cores: does this machine give two threads two cores right now?
 *
 * A virtual machine's two CPUs may be the two hardware threads of one
 * physical core for a while; two threads of code that keeps the execution
 * units busy then run at about half speed each, and no program can scale
 * over that.  This probe runs a loop of independent register additions (no
 * memory access at all, so nothing to share but the core) first in one
 * thread, then in two at once, and counts its progress in 20 ms slices.
 *
 * Prints one line:
 *     slices=<2-thread slices> both_slow=<n> one_slow=<n> rate=<1-thread adds/us>
 * both_slow: slices in which both threads ran under 65% of the 1-thread
 * rate (the two CPUs on one core); one_slow: slices in which one did
 * (something else on its core's other hardware thread).
 *
 * With -v first, one more line per slice: each thread's rate relative to
 * the 1-thread rate.
 *
 * Usage: cores [-v] [seconds]   (default 2; the 1-thread part takes a quarter)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLICE_NS 20000000LL
#define MAX_SLICES 1000
#define SLOW 0.65

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* 60,000 additions in six independent chains: the core's adders, nothing
 * else. */
static void add_burst(void)
{
    unsigned long a = 1, b = 2, c = 3, d = 4, e = 5, f = 6;
    for (int i = 0; i < 10000; i++)
        __asm__ volatile("add $1, %0\n\tadd $1, %1\n\tadd $1, %2\n\t"
                         "add $1, %3\n\tadd $1, %4\n\tadd $1, %5"
                         : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
}

struct run {
    long long start;
    int slices;
    double rate[MAX_SLICES];    /* bursts per slice */
};

static void *run_slices(void *arg)
{
    struct run *r = arg;
    while (now_ns() < r->start)
        ;                       /* both threads start the first slice together */
    for (int s = 0; s < r->slices; s++) {
        long long end = r->start + (s + 1) * SLICE_NS;
        long bursts = 0;
        while (now_ns() < end) {
            add_burst();
            bursts++;
        }
        r->rate[s] = (double)bursts;
    }
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    if (verbose) {
        argc--;
        argv++;
    }
    double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    int slices = (int)(seconds * 1e9 / SLICE_NS);
    if (slices < 4 || slices > MAX_SLICES) {
        fprintf(stderr, "cores: seconds must be 0.08..%d\n", (int)(MAX_SLICES * SLICE_NS / 1000000000LL));
        return 2;
    }
    static struct run alone, two[2];
    alone.slices = slices / 4;
    alone.start = now_ns();
    run_slices(&alone);
    qsort(alone.rate, (size_t)alone.slices, sizeof alone.rate[0], by_value);
    double reference = alone.rate[alone.slices / 2];   /* the median slice */

    pthread_t other;
    two[0].slices = two[1].slices = slices;
    two[0].start = two[1].start = now_ns() + SLICE_NS;
    if (pthread_create(&other, NULL, run_slices, &two[1]) != 0) {
        perror("cores: pthread_create");
        return 1;
    }
    run_slices(&two[0]);
    pthread_join(other, NULL);

    int both = 0, one = 0;
    for (int s = 0; s < slices; s++) {
        int slow = (two[0].rate[s] < SLOW * reference) + (two[1].rate[s] < SLOW * reference);
        both += slow == 2;
        one += slow == 1;
        if (verbose)
            printf("slice %d: %.2f %.2f\n", s, two[0].rate[s] / reference, two[1].rate[s] / reference);
    }
    printf("slices=%d both_slow=%d one_slow=%d rate=%.0f\n", slices, both, one,
           reference * 60000 / (SLICE_NS / 1000));
    return 0;
}
