/* Filters and throttling (tests/core/test_skip.py, docs/filters.md).
 *
 *   skipping filters     a fixed tree with functions to exclude in it, some
 *                        inside recursion, in the main thread and in one
 *                        other thread
 *   skipping throttle N  main -> hot_loop -> hot N times (to be throttled),
 *                        while a second thread holds a frame of hot open
 *                        until the loop is done; then a fixed tree after
 *   skipping inlined N   inl, always inlined, N times in one host's loop
 *                        (to be throttled there), then 5 times in another
 *   skipping recurse N   down(3) N times: down recursing into itself
 *
 * Every function is noinline, so the tree is the source's. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static volatile long sink;

NOINLINE void leaf(void)
{
    sink++;
}

/* The functions to skip, as if from a header (file:skipped_part.h). */
NOINLINE int rec(int n);
#line 1 "skipped_part.h"
NOINLINE void skip_me(int n)
{
    for (int i = 0; i < n; i++)
        leaf();
}

/* rec -> skip_hop -> rec: with skip_hop excluded, rec -> rec. */
NOINLINE int skip_hop(int n)
{
    return rec(n);
}
#line 34 "skipping.c"

NOINLINE void keep_outer(void)
{
    for (int i = 0; i < 3; i++)
        skip_me(2);
    leaf();
}

NOINLINE int rec(int n)
{
    return n <= 0 ? 0 : 1 + skip_hop(n - 1);
}

NOINLINE void *filters_thread(void *arg)
{
    (void)arg;
    keep_outer();
    return NULL;
}

NOINLINE void run_filters(void)
{
    pthread_t th;
    keep_outer();
    sink += rec(5);
    if (pthread_create(&th, NULL, filters_thread, NULL) == 0)
        pthread_join(th, NULL);
}

/* hot(1) waits, with its frame open, until the loop is done. */
static volatile int loop_done, held;

NOINLINE void hot(int hold)
{
    sink++;
    if (hold) {
        __atomic_store_n(&held, 1, __ATOMIC_RELEASE);
        while (!__atomic_load_n(&loop_done, __ATOMIC_ACQUIRE))
            ;
    }
}

NOINLINE void hot_loop(long n)
{
    for (long i = 0; i < n; i++)
        hot(0);
}

NOINLINE void after(void)
{
    leaf();
}

/* A frame below hot's: were hot's frame left open for want of its exit,
 * nothing would show this call is not hot's callee (skip.c). */
NOINLINE void after_deep(void)
{
    volatile char buf[512];
    buf[0] = 1;
    leaf();
    sink += buf[0];
}

NOINLINE void *holder(void *arg)
{
    (void)arg;
    hot(1);
    after_deep();
    return NULL;
}

NOINLINE void run_throttle(long n)
{
    pthread_t th;
    if (pthread_create(&th, NULL, holder, NULL) != 0)
        return;
    while (!__atomic_load_n(&held, __ATOMIC_ACQUIRE))
        ;
    hot_loop(n);
    __atomic_store_n(&loop_done, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    for (int i = 0; i < 4; i++)
        after();
}

/* GCC instruments inlined copies too: each copy has hook calls of its own,
 * in its host, all naming inl. */
static inline __attribute__((always_inline)) void inl(void)
{
    sink += 2;
}

NOINLINE void inl_loop(long n)
{
    for (long i = 0; i < n; i++)
        inl();
}

NOINLINE void inl_once(void)
{
    inl();
}

NOINLINE void run_inlined(long n)
{
    inl_loop(n);
    for (int i = 0; i < 5; i++)
        inl_once();
    after();
}

NOINLINE void down(int n)
{
    if (n > 0)
        down(n - 1);
    sink++;
}

NOINLINE void run_recurse(long n)
{
    for (long i = 0; i < n; i++)
        down(3);
    after();
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "filters"))
        run_filters();
    else if (argc > 2 && !strcmp(argv[1], "throttle"))
        run_throttle(atol(argv[2]));
    else if (argc > 2 && !strcmp(argv[1], "inlined"))
        run_inlined(atol(argv[2]));
    else if (argc > 2 && !strcmp(argv[1], "recurse"))
        run_recurse(atol(argv[2]));
    else
        return 2;
    return 0;
}
