/*
 * jump: longjmp skips the exit hooks of the frames it leaves
 * (tests/core/test_robust.py).
 *
 *   main
 *     jump_a            x ROUNDS
 *       jump_b          x ROUNDS
 *         jump_c        x ROUNDS    longjmp back to main from here
 *     after_jump        x ROUNDS    called from main after each longjmp
 *     last              x1
 *
 * jump_a, jump_b and jump_c never return: their exits are never reported.
 */
#include <setjmp.h>
#include <stdio.h>
#include "progs.h"

#define ROUNDS 5
volatile long sink;
static jmp_buf back;

KEEP void jump_c(void) { sink++; longjmp(back, 1); }
KEEP void jump_b(void) { jump_c(); sink++; }
KEEP void jump_a(void) { jump_b(); sink++; }
KEEP void after_jump(void) { sink++; }
KEEP void last(void) { sink++; }

int main(void)
{
    for (volatile int i = 0; i < ROUNDS; i++) {
        if (setjmp(back) == 0)
            jump_a();
        after_jump();
    }
    last();
    printf("jump: %ld\n", (long)sink);
    return 0;
}
