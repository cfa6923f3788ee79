/* Known inlining on both compilers for the view as compiled
 * (tests/reports/test_as_compiled_hosts.py): built -O2
 * -finstrument-functions with gcc or clang, sq() (always_inline) is inlined
 * into two hosts, host_a() and host_b(), and also called out of line, from
 * main through a pointer.  Both compilers call the hooks around each
 * inlined copy with the host's call site.  sq() calls leaf(), a real call;
 * host_a() calls leaf() directly too, so as compiled host_a > leaf holds
 * both (2 * M calls per host_a call).
 *
 *   source view                    as compiled
 *   main > host_a > sq > leaf      main > host_a > leaf   (N * 2M calls)
 *   main > host_a > leaf
 *   main > host_b > sq > leaf      main > host_b > leaf   (N * M)
 *   main > sq > leaf  (K calls)    main > sq > leaf       (unchanged)
 */
#include <stdio.h>

#define N 40
#define M 1000
#define K 3000

static volatile long sink;

__attribute__((noinline)) long leaf(long x);
__attribute__((noinline)) long leaf(long x)
{
    sink += x;
    return x + 1;
}

static inline __attribute__((always_inline)) long sq(long x)
{
    return x * x + leaf(x);
}

/* the two hosts: M copies of sq each per call, host_a also M calls of leaf */
static __attribute__((noinline)) long host_a(long k)
{
    long s = 0, i = M;
    while (i-- > 0)
        s += sq(i + k) + leaf(i);
    return s;
}

static __attribute__((noinline)) long host_b(long k)
{
    long s = 0, i = M;
    while (i-- > 0)
        s ^= sq(i - k);
    return s;
}

/* volatile: the compiler cannot see through it, so this call stays a call
 * of the out-of-line copy */
static long (*volatile out_of_line)(long) = sq;

int main(void)
{
    long s = 0;
    for (long k = 0; k < N; k++)
        s += host_a(k) + host_b(k);
    for (long k = 0; k < K; k++)
        s += out_of_line(k);
    printf("%ld\n", s);
    return 0;
}
