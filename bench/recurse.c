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
 * per thread), all released at once: the scaling variant.  Each thread has
 * its own tree in hookit, so nothing should be shared on the hot path and
 * N threads on N idle CPUs should take the time of one.  The threads are
 * made before the clock starts and wait spinning, not asleep: waking a
 * halted virtual CPU takes milliseconds on a VM, which is the hypervisor's
 * time, not the work's.  For the same reason the loop ends at the last
 * thread's own end, not when main's join returns.
 *
 * START_AT (CLOCK_MONOTONIC nanoseconds) releases the work at that moment
 * rather than at once: bench/run starts two processes with the same
 * START_AT to measure two copies that share nothing at all, the control
 * for the threads' scaling.  It then also prints late_ns, how long after
 * START_AT the work began (0 unless the process started too late).
 *
 * Prints one line
 *     calls=<N> ns=<wall ns> cpu_ns=<process CPU ns> end_cpu_ns=<..> end_ns=<..>
 * calls: fib calls of all threads; ns and cpu_ns: the recursion alone
 * (CPU time is what a busy machine disturbs least); end_cpu_ns and end_ns:
 * the process's CPU clock and the monotonic clock when main returns, so
 * bench/run can tell what happens after it (the profiler writing its
 * profile) from the process's total CPU time and the moment it ends.
 *
 * Usage: recurse [n [threads [start_at]]]   (default 36 1)
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
static volatile int released, waiting;
static long long ended_ns[64];

NOINSTR static inline void spin_once(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Until the main thread releases the work: spinning, so every CPU is awake
 * when it starts. */
NOINSTR static void wait_for_release(void)
{
    __atomic_add_fetch(&waiting, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE))
        spin_once();
}

/* One thread's work, from release to its own end.  Instrumented like fib,
 * so the profiler sees a root per thread (and attaches the thread before
 * the release). */
static void *worker(void *arg)
{
    wait_for_release();
    volatile long r = fib(depth);
    (void)r;
    ended_ns[(long)arg] = now_ns(CLOCK_MONOTONIC);
    return arg;
}

/* Sleeps until just before start_at, then spins to it. */
NOINSTR static void wait_until(long long start_at)
{
    long long early = start_at - 2000000;
    struct timespec ts = { early / 1000000000LL, early % 1000000000LL };
    if (early > now_ns(CLOCK_MONOTONIC))
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    while (now_ns(CLOCK_MONOTONIC) < start_at)
        spin_once();
}

static pthread_t tids[64];

/* The other threads made and spinning: a thread just made may not run for
 * a while yet, which would be counted against the work. */
NOINSTR static void start_threads(int threads)
{
    for (long i = 1; i < threads; i++)
        if (pthread_create(&tids[i], NULL, worker, (void *)i) != 0) {
            perror("recurse: pthread_create");
            exit(1);
        }
    while (__atomic_load_n(&waiting, __ATOMIC_ACQUIRE) < threads - 1)
        spin_once();
}

/* The moment the last thread finished its work. */
NOINSTR static long long join_threads(int threads)
{
    long long last = ended_ns[0];
    for (int i = 1; i < threads; i++) {
        pthread_join(tids[i], NULL);
        if (ended_ns[i] > last)
            last = ended_ns[i];
    }
    return last;
}

int main(int argc, char **argv)
{
    depth = argc > 1 ? atoi(argv[1]) : 36;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    if (threads < 1 || threads > 64) {
        fprintf(stderr, "recurse: threads must be 1..64\n");
        return 2;
    }
    long long start_at = argc > 3 ? atoll(argv[3]) : 0;
    start_threads(threads);
    if (start_at)
        wait_until(start_at);
    long long t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    __atomic_store_n(&released, 1, __ATOMIC_RELEASE);
    long long t1;
    if (threads == 1) {             /* fib straight from main, as in the micro table */
        volatile long r = fib(depth);
        (void)r;
        t1 = now_ns(CLOCK_MONOTONIC);
    } else {
        worker(0);
        t1 = join_threads(threads);
    }
    long long c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    printf("calls=%lld ns=%lld cpu_ns=%lld", calls_of(depth) * threads, t1 - t0, c1 - c0);
    if (start_at)
        printf(" late_ns=%lld", t0 - start_at);
    printf(" end_cpu_ns=%lld", now_ns(CLOCK_PROCESS_CPUTIME_ID));
    printf(" end_ns=%lld\n", now_ns(CLOCK_MONOTONIC));
    fflush(stdout);
    return 0;
}
