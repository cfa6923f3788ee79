/*
 * coro: makecontext/swapcontext coroutines that run to completion (uc_link
 * returns to the caller), with the coroutine's stack on the heap (STACK=1),
 * in static memory (2) or in an array local to main's frame (3).  Entries and
 * exits pair, so refstack is exact:
 *   main > foo > run_coro > coro > leaf x2
 *   main > baz > run_coro > coro > leaf x2,  main > baz > leaf
 * (the issue saw the roots coro and baz instead).
 */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#ifndef STACK
#define STACK 1
#endif
#define SIZE (64 * 1024)

static ucontext_t caller, co;
static volatile long sink;
#if STACK == 2
static char static_stack[SIZE] __attribute__((aligned(16)));
#endif

static void leaf(void) { sink++; }
static void coro(void) { leaf(); leaf(); }

static void run_coro(char *stack)
{
    getcontext(&co);
    co.uc_stack.ss_sp = stack;
    co.uc_stack.ss_size = SIZE;
    co.uc_link = &caller;
    makecontext(&co, coro, 0);
    swapcontext(&caller, &co);
}

static void foo(char *stack) { run_coro(stack); }
static void baz(char *stack) { run_coro(stack); leaf(); }

int main(void)
{
#if STACK == 1
    char *stack = malloc(SIZE);
#elif STACK == 2
    char *stack = static_stack;
#else
    char frame_stack[SIZE] __attribute__((aligned(16)));
    char *stack = frame_stack;
#endif
    foo(stack);
    baz(stack);
    printf("coro: %ld\n", (long)sink);
    return 0;
}
