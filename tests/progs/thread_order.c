/*
 * thread_order: threads that run their first instrumented code in the
 * reverse order of their creation (tests/core/test_threads.py).  Thread
 * indexes follow creation: first_created gets index 1, second_created 2,
 * even though second_created's instrumented code runs first.
 *
 * The start routine is not instrumented; thread 1 waits until thread 2 has
 * finished its instrumented call.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include "progs.h"

#define NOINSTR __attribute__((no_instrument_function))

volatile long sink;
static sem_t second_done;

KEEP void first_created(void) { sink++; }
KEEP void second_created(void) { sink++; }

NOINSTR static void *run_first(void *arg)
{
    (void)arg;
    sem_wait(&second_done);
    first_created();
    return NULL;
}

NOINSTR static void *run_second(void *arg)
{
    (void)arg;
    second_created();
    sem_post(&second_done);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    sem_init(&second_done, 0, 0);
    pthread_create(&a, NULL, run_first, NULL);
    pthread_create(&b, NULL, run_second, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("thread_order: %ld\n", (long)sink);
    return 0;
}
