/* Stress: recursion DEPTH deep (on a thread with a stack big enough), then
 * a call after it returns.  st_recurse DEPTH */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static long down(long n)
{
    if (n == 0)
        return 0;
    return down(n - 1) + 1;     /* not a tail call: every frame stays */
}

__attribute__((noinline)) static long after(long x) { return x + 1; }

static void *run(void *arg)
{
    long depth = (long)arg;
    return (void *)after(down(depth - 1));
}

int main(int argc, char **argv)
{
    long depth = argc > 1 ? atol(argv[1]) : 1000000;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)depth * 256 + (1 << 20));
    pthread_t t;
    void *r;
    if (pthread_create(&t, &attr, run, (void *)depth) != 0) {
        perror("pthread_create");
        return 2;
    }
    pthread_join(t, &r);
    printf("depth %ld result %ld\n", depth, (long)r);
    return 0;
}
