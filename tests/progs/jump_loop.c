/*
 * jump_loop: longjmp and siglongjmp out of recursion, back into a loop that
 * calls the same function again from the same call site
 * (tests/core/test_exact.py).  step() may be inlined into loop(): then its
 * entry has the same frame and call site as the call before the jump, and
 * only the interposed setjmp/longjmp tell a new call from an inlined one.
 *
 *   main
 *     loop
 *       step          x ROUNDS
 *         dive        x ROUNDS, then dive ... DEPTH deep
 *       after         x ROUNDS
 *     sigloop
 *       dive          x ROUNDS (siglongjmp from DEPTH deep)
 *       ...
 */
#include <setjmp.h>
#include <stdio.h>
#include "progs.h"

#define ROUNDS 4
#define DEPTH 5
volatile long sink;
static jmp_buf back;
static sigjmp_buf sigback;

KEEP void dive(int n, int sig)
{
    sink++;
    if (n == 0) {
        if (sig)
            siglongjmp(sigback, 1);
        longjmp(back, 1);
    }
    dive(n - 1, sig);
}

static void step(void) { dive(DEPTH - 1, 0); }
KEEP void after(void) { sink++; }

KEEP void loop(void)
{
    for (volatile int i = 0; i < ROUNDS; i++) {
        if (setjmp(back) == 0)
            step();
        after();
    }
}

KEEP void sigloop(void)
{
    for (volatile int i = 0; i < ROUNDS; i++)
        if (sigsetjmp(sigback, 1) == 0)
            dive(DEPTH - 1, 1);
}

int main(void)
{
    loop();
    sigloop();
    printf("jump_loop: %ld\n", (long)sink);
    return 0;
}
