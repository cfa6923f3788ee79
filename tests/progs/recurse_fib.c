/* recurse_fib: fib(N) by double recursion, a known number of calls
 * (tests/core/test_modes.py). */
#include <stdio.h>
#include <stdlib.h>
#include "progs.h"

KEEP int fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 25;
    printf("fib(%d) = %d\n", n, fib(n));
    return 0;
}
