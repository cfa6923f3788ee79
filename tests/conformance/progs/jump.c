/*
 * jump: longjmp out of deep recursion, back into a loop that calls the same
 * function again from the same call site, and nested jump buffers.  JUMP
 * selects the flavour: 1 setjmp/longjmp (with -D_FORTIFY_SOURCE=2 -O2 longjmp
 * becomes __longjmp_chk), 2 sigsetjmp/siglongjmp, 3 _setjmp/_longjmp.
 * Expected tree: written in cases.py (exits do not pair).
 *
 *   main
 *     dive x5 > dive x5 > ... (9 levels, longjmp to main at the bottom)
 *     after x5 > leaf x5
 *     middle x3
 *       inner_dive (k+1 levels for k = 0, 1, 2; longjmp to middle at the bottom)
 *       leaf x3
 *       dive x1 > ... (4 levels; from middle(2), longjmp to main)
 *     leaf x3
 */
#include <setjmp.h>
#include <stdio.h>

#ifndef JUMP
#define JUMP 1
#endif
#if JUMP == 1
#define BUF jmp_buf
#define SET(b) setjmp(b)
#define JMP(b) longjmp(b, 1)
#elif JUMP == 2
#define BUF sigjmp_buf
#define SET(b) sigsetjmp(b, 1)
#define JMP(b) siglongjmp(b, 1)
#else
#define BUF jmp_buf
#define SET(b) _setjmp(b)
#define JMP(b) _longjmp(b, 1)
#endif

static BUF top, inner;
static volatile long sink;

static void dive(int n)
{
    if (n == 0)
        JMP(top);
    dive(n - 1);
    sink++;
}

static void leaf(void) { sink++; }
static void after(void) { leaf(); }

static void inner_dive(int n)
{
    if (n == 0)
        JMP(inner);
    inner_dive(n - 1);
    sink++;
}

static void middle(int k)
{
    if (SET(inner) == 0)
        inner_dive(k);
    leaf();
    if (k == 2)
        dive(3);
}

int main(void)
{
    static volatile int i;
    for (i = 0; i < 5; i++) {
        if (SET(top) == 0)
            dive(8);
        after();
    }
    for (i = 0; i < 3; i++) {
        if (SET(top) == 0)
            middle(i);
        leaf();
    }
    printf("jump: %ld\n", (long)sink);
    return 0;
}
