/* Threads one after another, run with JPROFOPTS=threads_kept=1: the first
 * builds a tree of 5,000 nodes, which is merged away and its chunks (1,024
 * slots, the largest) go back to the free lists; the next threads' paths
 * are new to the merged tree, which then needs a chunk of that size while
 * retire.c holds its lock (tests/core/test_threads.py). */
#include <pthread.h>
#include <stdio.h>

static int deep(int d)
{
    return d ? 1 + deep(d - 1) : 0;
}
static int other(int d)
{
    return d ? 1 + other(d - 1) : 0;
}
static void *big(void *arg)
{
    return (void *)(long)deep((int)(long)arg);
}
static void *small(void *arg)
{
    return (void *)(long)other((int)(long)arg);
}

int main(void)
{
    long sum = 0;
    for (int i = 0; i < 6; i++) {
        pthread_t t;
        void *r;
        pthread_create(&t, 0, i ? small : big, (void *)(long)(i ? 300 * i : 5000));
        pthread_join(t, &r);
        sum += (long)r;
    }
    printf("merge_grow: %ld\n", sum);
    return 0;
}
