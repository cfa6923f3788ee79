/*
 * pthread_exit: threads leave with pthread_exit three calls deep (no exit
 * hooks run for those frames), and main leaves the same way while a thread
 * still runs.  Counts are taken at entry, so refstack is exact.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static volatile long sink;
static pthread_t last;

static void leaf(void) { sink++; }
static void deep3(void) { leaf(); pthread_exit(NULL); }
static void deep2(void) { leaf(); deep3(); }
static void deep1(void) { deep2(); }

static void *worker(void *arg)
{
    leaf();
    deep1();
    return NULL;
}

static void *late_worker(void *arg)
{
    usleep(20000);
    for (int i = 0; i < 3; i++)
        leaf();
    return NULL;
}

static void main_deep2(void) { printf("pthread_exit: %ld\n", (long)sink); fflush(stdout); pthread_exit(NULL); }
static void main_deep1(void) { leaf(); main_deep2(); }

int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    pthread_create(&last, NULL, late_worker, NULL);
    main_deep1();
    return 0;
}
