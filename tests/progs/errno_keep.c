/*
 * errno_keep: hookit must never change errno (tests/core/test_robust.py).
 * errno is set just before the hooks run their rarer paths, and read right
 * after by instrumented code:
 *   - the first instrumented call of the main thread and of new threads
 *     (the profiler attaches the thread: stack bounds, per-thread memory);
 *   - a 20000-deep recursion (the shadow stack grows) and 20000 distinct
 *     call paths (the node arena grows);
 *   - the exit hook after a function that set errno.
 * Prints the number of times errno was not what the program set.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include "progs.h"

#define NOINSTR __attribute__((no_instrument_function))

volatile long sink;
static int bad;

KEEP int probe(void) { return errno; }

KEEP void set_errno(int e) { errno = e; }

/* Every level: errno survives the enter hooks of probe and the exit hook of set_errno. */
KEEP void deep(int n)
{
    errno = EDOM;
    bad += probe() != EDOM;
    set_errno(ERANGE);
    bad += errno != ERANGE;
    if (n > 0)
        deep(n - 1);
}

/* Distinct paths: leaf_k under wide, each its own node. */
#define LEAF(k) KEEP void leaf_##k(void) { sink++; }
#define L10(k) LEAF(k##0) LEAF(k##1) LEAF(k##2) LEAF(k##3) LEAF(k##4) \
               LEAF(k##5) LEAF(k##6) LEAF(k##7) LEAF(k##8) LEAF(k##9)
L10(1) L10(2) L10(3) L10(4) L10(5)
#define C(k) errno = EDOM; leaf_##k(); bad += errno != EDOM;
#define C10(k) C(k##0) C(k##1) C(k##2) C(k##3) C(k##4) C(k##5) C(k##6) C(k##7) C(k##8) C(k##9)

/* 50 children per level, 400 levels deep: 20000 nodes. */
KEEP void wide(int n)
{
    C10(1) C10(2) C10(3) C10(4) C10(5)
    if (n > 0)
        wide(n - 1);
}

NOINSTR static void *thread_main(void *arg)
{
    (void)arg;
    errno = EILSEQ;                      /* before this thread's first hook */
    if (probe() != EILSEQ)
        __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
    return NULL;
}

int main(void)
{
    for (int i = 0; i < 4; i++) {
        pthread_t t;
        pthread_create(&t, NULL, thread_main, NULL);
        pthread_join(t, NULL);
    }
    deep(20000);
    wide(400);
    errno = EXDEV;
    set_errno(ENOTDIR);
    bad += errno != ENOTDIR;
    printf("errno_keep: bad=%d\n", bad);
    return 0;
}
