/*
 * throws: a loop that throws through a frame holding an inlined callee,
 * for the cost of deciding whose the landing pad is (docs/exactness.md,
 * "A landing pad in a frame that holds inlined callees").  Not part of
 * `make bench`; run by hand, side by side:
 *
 *   clang++ -O2 -finstrument-functions bench/throws.cc -o throws
 *   build/bin/hookit run -o DIR -- ./throws 200000
 *
 * Each iteration: host() entered, the inlined inner_throws() entered, a
 * throw caught by host's catch clause, handled() called.  Prints the time
 * per iteration, measured by the program itself.
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>

static volatile long sink;

__attribute__((noinline)) void handled() { sink++; }

__attribute__((always_inline)) inline void inner_throws()
{
    sink++;
    if (sink > 0)
        throw 1;
}

__attribute__((noinline)) void host()
{
    try {
        inner_throws();
    } catch (int) {
        handled();
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? std::atol(argv[1]) : 200000;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++)
        host();
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
    std::printf("throws: %ld iterations, %.0f ns each\n", n, ns / n);
    return 0;
}
