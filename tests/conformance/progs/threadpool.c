/*
 * threadpool: 4 workers run 8 Ackermann tasks from run_task, 2 each (a fixed
 * assignment, so that every thread's tree is deterministic).  The issue
 * measured 27,976 calls of ackermann under run_task where there are 8.
 * Reference: refstack.
 */
#include <pthread.h>
#include <stdio.h>

#define WORKERS 4
#define TASKS 8

static long results[TASKS];

static long ackermann(long m, long n)
{
    if (m == 0)
        return n + 1;
    if (n == 0)
        return ackermann(m - 1, 1);
    return ackermann(m - 1, ackermann(m, n - 1));
}

static void run_task(int t) { results[t] = ackermann(2, 3); }

static void *worker(void *arg)
{
    int w = (int)(long)arg;
    for (int t = w * (TASKS / WORKERS); t < (w + 1) * (TASKS / WORKERS); t++)
        run_task(t);
    return NULL;
}

static void start_pool(pthread_t *th)
{
    for (long w = 0; w < WORKERS; w++)
        pthread_create(&th[w], NULL, worker, (void *)w);
}

static long join_pool(pthread_t *th)
{
    long sum = 0;
    for (int w = 0; w < WORKERS; w++)
        pthread_join(th[w], NULL);
    for (int t = 0; t < TASKS; t++)
        sum += results[t];
    return sum;
}

int main(void)
{
    pthread_t th[WORKERS];
    start_pool(th);
    printf("threadpool: %ld\n", join_pool(th));
    return 0;
}
