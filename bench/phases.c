/* The phases program: the truth for where the time goes (issue 26).
 *
 * Three phases, each a loop over one noinline leaf of a known size: many
 * calls of a leaf of about a nanosecond, fewer of one of about 60 ns, few
 * of one of about 2 us.  Built without instrumentation it times its own
 * phases (CLOCK_MONOTONIC and the thread's CPU clock, read outside the
 * phases), which is what a profile of the instrumented build must agree
 * with: each phase function's inclusive share.  The phase functions and the
 * leaves are what a profiler sees; main's clock reads are not instrumented.
 *
 *   phases [SCALE]   SCALE multiplies every phase's calls (default 1)
 *
 * Prints one line: "phases tiny=NS mid=NS slow=NS cpu_tiny=NS cpu_mid=NS
 * cpu_slow=NS" (wall and CPU nanoseconds per phase). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINSTR __attribute__((no_instrument_function))

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t tiny_leaf(uint64_t x)
{
    return x * 7 + 1;
}

__attribute__((noinline)) uint64_t mid_leaf(uint64_t x)
{
    for (int i = 0; i < 40; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

__attribute__((noinline)) uint64_t slow_leaf(uint64_t x)
{
    for (int i = 0; i < 1400; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

__attribute__((noinline)) void phase_tiny(long n)
{
    uint64_t x = 1;
    for (long i = 0; i < n; i++)
        x = tiny_leaf(x);
    sink = x;
}

__attribute__((noinline)) void phase_mid(long n)
{
    uint64_t x = 1;
    for (long i = 0; i < n; i++)
        x = mid_leaf(x);
    sink = x;
}

__attribute__((noinline)) void phase_slow(long n)
{
    uint64_t x = 1;
    for (long i = 0; i < n; i++)
        x = slow_leaf(x);
    sink = x;
}

NOINSTR static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct moment {
    uint64_t wall, cpu;
};

NOINSTR static struct moment now(void)
{
    return (struct moment){ clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_THREAD_CPUTIME_ID) };
}

int main(int argc, char **argv)
{
    long scale = argc > 1 ? atol(argv[1]) : 1;
    if (scale < 1) {
        fprintf(stderr, "usage: phases [SCALE >= 1]\n");
        return 2;
    }
    struct moment m[4];
    m[0] = now();
    phase_tiny(20000000 * scale);
    m[1] = now();
    phase_mid(1000000 * scale);
    m[2] = now();
    phase_slow(30000 * scale);
    m[3] = now();
    printf("phases tiny=%llu mid=%llu slow=%llu cpu_tiny=%llu cpu_mid=%llu cpu_slow=%llu\n",
           (unsigned long long)(m[1].wall - m[0].wall), (unsigned long long)(m[2].wall - m[1].wall),
           (unsigned long long)(m[3].wall - m[2].wall), (unsigned long long)(m[1].cpu - m[0].cpu),
           (unsigned long long)(m[2].cpu - m[1].cpu), (unsigned long long)(m[3].cpu - m[2].cpu));
    return 0;
}
