/*
 * recurse: the call-overhead microbenchmark of `make bench`.
 *
 * fib(n) by plain double recursion makes exactly 2*F(n+1) - 1 calls of
 * fib (F = the Fibonacci numbers; fib(36): 48,315,633 calls).  Nothing else
 * runs in the timed part, so the time per call is the cost of one call plus
 * a trivial body, and with -finstrument-functions, of one enter and one
 * exit hook on top.
 *
 * With THREADS > 1, every thread computes the same fib(n) (the same work
 * per thread), all released at once by a barrier: the scaling variant.
 * Each thread has its own tree in hookit, so nothing should be shared on
 * the hot path and N threads on N idle CPUs should take the time of one.
 *
 * Prints one line
 *     calls=<N> ns=<wall ns> cpu_ns=<process CPU ns> end_cpu_ns=<..> end_ns=<..>
 * calls: fib calls of all threads; ns and cpu_ns: the recursion alone
 * (CPU time is what a busy machine disturbs least); end_cpu_ns and end_ns:
 * the process's CPU clock and the monotonic clock when main returns, so
 * bench/run can tell what happens after it (the profiler writing its
 * profile) from the process's total CPU time and the moment it ends.
 *
 * Usage: recurse [n [threads]]   (default 36 1)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noipa))     /* no clones, no partial inlining */
#endif
#define NOINSTR __attribute__((no_instrument_function))

KEEP long fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

NOINSTR static long long now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The number of calls fib(n) makes, computed without calling it. */
NOINSTR static long long calls_of(int n)
{
    long long a = 0, b = 1;              /* F(0), F(1) */
    for (int i = 0; i < n + 1; i++) {    /* -> b = F(n+2), a = F(n+1) */
        long long t = a + b;
        a = b;
        b = t;
    }
    return 2 * a - 1;
}

static int depth;
static pthread_barrier_t start_line;

/* A worker thread: waits for the others, then does one thread's work.
 * Instrumented like fib, so the profiler sees a root per thread. */
static void *worker(void *arg)
{
    pthread_barrier_wait(&start_line);
    volatile long r = fib(depth);
    (void)r;
    return arg;
}

/* Runs fib(depth) in `threads` threads at once (the main thread is one). */
NOINSTR static void run_threads(int threads)
{
    pthread_t tids[64];
    pthread_barrier_init(&start_line, NULL, (unsigned)threads);
    for (int i = 1; i < threads; i++)
        if (pthread_create(&tids[i], NULL, worker, NULL) != 0) {
            perror("recurse: pthread_create");
            exit(1);
        }
    worker(NULL);
    for (int i = 1; i < threads; i++)
        pthread_join(tids[i], NULL);
}

int main(int argc, char **argv)
{
    depth = argc > 1 ? atoi(argv[1]) : 36;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    if (threads < 1 || threads > 64) {
        fprintf(stderr, "recurse: threads must be 1..64\n");
        return 2;
    }
    long long t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    if (threads == 1) {
        volatile long r = fib(depth);
        (void)r;
    } else {
        run_threads(threads);
    }
    long long c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID), t1 = now_ns(CLOCK_MONOTONIC);
    printf("calls=%lld ns=%lld cpu_ns=%lld", calls_of(depth) * threads, t1 - t0, c1 - c0);
    printf(" end_cpu_ns=%lld", now_ns(CLOCK_PROCESS_CPUTIME_ID));
    printf(" end_ns=%lld\n", now_ns(CLOCK_MONOTONIC));
    fflush(stdout);
    return 0;
}
