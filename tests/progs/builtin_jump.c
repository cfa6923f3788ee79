/*
 * builtin_jump: a jump nobody reports (tests/core/test_exact.py).  GCC's
 * __builtin_setjmp/__builtin_longjmp call no library function, so hookit
 * cannot be told; the fallback repairs the tree at the next entry, and the
 * profile says it was repaired (unmatched exits).
 *
 *   main > loop > dive x3 deep (abandoned by the jump), after
 */
#include <stdio.h>
#include "progs.h"

volatile long sink;
static void *buf[5];

KEEP void dive(int n)
{
    sink++;
    if (n == 0)
        __builtin_longjmp(buf, 1);
    dive(n - 1);
}

KEEP void after(void) { sink++; }

KEEP void loop(void)
{
    if (__builtin_setjmp(buf) == 0)
        dive(2);
    after();
}

int main(void)
{
    loop();
    printf("builtin_jump: %ld\n", (long)sink);
    return 0;
}
