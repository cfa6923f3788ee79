/*
 * inline_rec: recursion the compiler may inline into itself
 * (tests/core/test_exact.py).  GCC at -O2/-O3 instruments every inlined copy
 * and passes its host's return address; the tree must still be the call
 * tree the source implies:
 *
 *   main
 *     rec(10)                      a chain of 11 rec
 *     is_even(21)                  a chain is_even, is_odd, ... of 22
 *     fib(12)                      the calls of fib(12) by depth
 *     ack(2, 3)                    the calls of Ackermann by depth
 *
 * No KEEP: the optimiser is meant to inline these.
 */
#include <stdio.h>

volatile long sink;

static int rec(int n) { return n <= 0 ? 0 : 1 + rec(n - 1); }
static int is_odd(int n);
static int is_even(int n) { return n == 0 ? 1 : is_odd(n - 1); }
static int is_odd(int n) { return n == 0 ? 0 : is_even(n - 1); }
static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static int ack(int m, int n)
{
    if (m == 0)
        return n + 1;
    if (n == 0)
        return ack(m - 1, 1);
    return ack(m - 1, ack(m, n - 1));
}

int main(int argc, char **argv)
{
    (void)argv;
    int base = argc - 1;        /* 0: values the compiler cannot fold */
    sink = rec(base + 10) + is_even(base + 21) + fib(base + 12) + ack(base + 2, base + 3);
    printf("inline_rec: %ld\n", (long)sink);
    return 0;
}
