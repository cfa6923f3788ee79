/*
 * coro: a swapcontext coroutine whose stack is on the heap, in static
 * memory or inside main's frame (argv[1]: heap, static, frame)
 * (tests/core/test_exact.py).  A coroutine runs under whoever resumed it:
 *
 *   main
 *     foo
 *       coro            (its first run)
 *         work
 *     baz
 *       coro            context only: resumed here, not called (0 calls)
 *         work
 *       work
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include "progs.h"

#define STACK 65536
volatile long sink;
static ucontext_t main_uc, co_uc;
static char static_stack[STACK];

KEEP void work(void) { sink++; }

KEEP void coro(void)
{
    work();
    swapcontext(&co_uc, &main_uc);
    work();
}

KEEP void foo(char *stack)
{
    getcontext(&co_uc);
    co_uc.uc_stack.ss_sp = stack;
    co_uc.uc_stack.ss_size = STACK;
    co_uc.uc_link = &main_uc;
    makecontext(&co_uc, coro, 0);
    swapcontext(&main_uc, &co_uc);
}

KEEP void baz(void)
{
    swapcontext(&main_uc, &co_uc);
    work();
}

int main(int argc, char **argv)
{
    char frame_stack[STACK];
    const char *where = argc > 1 ? argv[1] : "heap";
    char *stack = !strcmp(where, "static") ? static_stack : !strcmp(where, "frame") ? frame_stack : malloc(STACK);
    foo(stack);
    baz();
    printf("coro: %ld\n", (long)sink);
    return 0;
}
