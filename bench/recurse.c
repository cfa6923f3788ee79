/*
 * recurse: the call-overhead microbenchmark of `make bench`.
 *
 * fib(n) by plain double recursion makes exactly 2*F(n+1) - 1 calls of
 * fib (F = the Fibonacci numbers; fib(36): 48,315,633 calls).  Nothing else
 * runs in the timed part, so the time per call is the cost of one call plus
 * a trivial body, and with -finstrument-functions, of one enter and one
 * exit hook on top.
 *
 * Prints `calls=<N> ns=<elapsed ns> cpu_ns=<CPU ns>` of the recursion alone
 * (CPU time is what a busy machine disturbs least); start-up and the
 * profiler's work at exit are measured apart by bench/run.
 *
 * Usage: recurse [n]   (default 36)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noipa))     /* no clones, no partial inlining */
#endif

KEEP long fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((no_instrument_function)) static long long now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The number of calls fib(n) makes, computed without calling it. */
__attribute__((no_instrument_function)) static long long calls_of(int n)
{
    long long a = 0, b = 1;              /* F(0), F(1) */
    for (int i = 0; i < n + 1; i++) {    /* -> b = F(n+2), a = F(n+1) */
        long long t = a + b;
        a = b;
        b = t;
    }
    return 2 * a - 1;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 36;
    long long t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    volatile long r = fib(n);
    long long c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID), t1 = now_ns(CLOCK_MONOTONIC);
    (void)r;
    printf("calls=%lld ns=%lld cpu_ns=%lld\n", calls_of(n), t1 - t0, c1 - c0);
    return 0;
}
