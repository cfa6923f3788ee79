/*
 * threads: four threads, each with its own call tree (tests/core/test_threads.py).
 *
 * Thread k (k = 0..3, started in that order, named "worker-k"):
 *   worker                        the start routine, the thread's only root
 *     work_k           x1         a function only thread k calls
 *       step         x(k+1)*10
 *         leaf       x(k+1) per step
 *     common         x(k+1)       every thread calls it, with its own count
 *
 * The main thread: main -> spawn x1 (creates the threads), then
 * main -> main_only x7 while the workers run, then joins them.
 * A barrier makes all four workers live at the same time.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include "progs.h"

#define NTHREADS 4

volatile long sink;
static pthread_barrier_t all_running;

/* sink is shared by the running threads: atomic adds, or the total printed
 * at the end loses an update now and then. */
#define ADD(n) __atomic_fetch_add(&sink, (n), __ATOMIC_RELAXED)

KEEP void leaf(void) { ADD(1); }

KEEP void step(int k)
{
    for (int i = 0; i <= k; i++)
        leaf();
}

KEEP void common(void) { ADD(2); }

/* Each calls step (k+1)*10 times. */
KEEP void work_0(void) { for (int i = 0; i < 10; i++) step(0); }
KEEP void work_1(void) { for (int i = 0; i < 20; i++) step(1); }
KEEP void work_2(void) { for (int i = 0; i < 30; i++) step(2); }
KEEP void work_3(void) { for (int i = 0; i < 40; i++) step(3); }

static void (*const work[NTHREADS])(void) = { work_0, work_1, work_2, work_3 };

KEEP void *worker(void *arg)
{
    int k = (int)(intptr_t)arg;
    char name[16];
    snprintf(name, sizeof name, "worker-%d", k);
    pthread_setname_np(pthread_self(), name);
    pthread_barrier_wait(&all_running);
    work[k]();
    for (int i = 0; i <= k; i++)
        common();
    return NULL;
}

KEEP void main_only(void) { ADD(-1); }

KEEP void spawn(pthread_t *t)
{
    for (int k = 0; k < NTHREADS; k++)
        pthread_create(&t[k], NULL, worker, (void *)(intptr_t)k);
}

int main(void)
{
    pthread_t t[NTHREADS];
    pthread_barrier_init(&all_running, NULL, NTHREADS);
    spawn(t);
    for (int i = 0; i < 7; i++)
        main_only();
    for (int k = 0; k < NTHREADS; k++)
        pthread_join(t[k], NULL);
    printf("threads: done %ld\n", (long)sink);
    return 0;
}
