/*
 * calls: a program whose call tree is known exactly (tests/core/test_calls.py
 * rebuilds the same tree in Python and compares node by node).
 *
 *   main
 *     nested        x1  -> level_a x2 -> level_b x3 -> level_c x4 (each)
 *     fib(12)           direct recursion, a node per depth
 *     fact(10)      x2  a chain of 10 nodes, 2 calls each
 *     is_even(9)        mutual recursion is_even/is_odd, 10 alternating nodes
 *     via_pointers  x1  calls op_add x4, op_sub x3, op_mul x3 through a table
 *     static_outer  x1  -> static_inner x5 (static functions)
 *     busy_wait_ms(50)  spins 50 ms of its thread's CPU time (inclusive >= 45 ms,
 *                       sampled or timed, however loaded the machine)
 *     nap_ms(20)        sleeps 20 ms: wall time, not CPU time, is counted
 *
 * Prints one line on stdout and returns 3, so a test can check that
 * profiling leaves output and exit status alone.  `calls exit` instead
 * leaves through exit(3) from inside die_here(), with main's and
 * die_here's frames still open.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "progs.h"

volatile long sink;

KEEP void level_c(void) { sink++; }

KEEP void level_b(void)
{
    for (int i = 0; i < 4; i++)
        level_c();
}

KEEP void level_a(void)
{
    for (int i = 0; i < 3; i++)
        level_b();
}

KEEP void nested(void)
{
    for (int i = 0; i < 2; i++)
        level_a();
}

KEEP long fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

KEEP long fact(int n)
{
    return n <= 1 ? 1 : n * fact(n - 1);
}

KEEP int is_odd(int n);

KEEP int is_even(int n)
{
    return n == 0 ? 1 : is_odd(n - 1);
}

KEEP int is_odd(int n)
{
    return n == 0 ? 0 : is_even(n - 1);
}

KEEP long op_add(long a, long b) { return a + b; }
KEEP long op_sub(long a, long b) { return a - b; }
KEEP long op_mul(long a, long b) { return a * b; }

/* volatile: the compiler cannot see which function a call reaches. */
static long (*volatile ops[3])(long, long) = { op_add, op_sub, op_mul };

KEEP long via_pointers(void)
{
    long acc = 1;
    for (int i = 0; i < 10; i++)       /* add 4 times (0,3,6,9), sub 3, mul 3 */
        acc = ops[i % 3](acc, i + 1);
    return acc;
}

KEEP static long static_inner(long x) { return x * 3 + 1; }

KEEP static long static_outer(void)
{
    long acc = 0;
    for (int i = 0; i < 5; i++)
        acc += static_inner(i);
    return acc;
}

/* Not instrumented: it is called an unknown number of times. */
__attribute__((no_instrument_function)) static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Spin rather than sleep: the time is spent in this very function, on the
 * CPU (counted in CPU time, so a loaded machine that takes the CPU away
 * meanwhile does not shorten it), and in user code: the clock (a system
 * call for a CPU clock) is read once per 10,000 rounds of the loop. */
KEEP void busy_wait_ms(int ms)
{
    double end = cpu_ms() + ms;
    do {
        for (int i = 0; i < 10000; i++)
            sink++;
    } while (cpu_ms() < end);
}

/* Sleep: the time passes off the CPU and still belongs to this call. */
KEEP void nap_ms(int ms)
{
    struct timespec ts = { 0, ms * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

KEEP void die_here(void)
{
    printf("calls: leaving through exit(3)\n");
    exit(3);
}

int main(int argc, char **argv)
{
    nested();
    long f = fib(12);
    long fa = fact(10) + fact(10);
    int even = is_even(9);
    long p = via_pointers();
    long s = static_outer();
    busy_wait_ms(50);
    nap_ms(20);
    if (argc > 1 && strcmp(argv[1], "exit") == 0)
        die_here();
    printf("calls: fib=%ld fact=%ld even=%d ptr=%ld static=%ld\n", f, fa, even, p, s);
    return 3;
}
