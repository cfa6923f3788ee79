/* A known split between work and waiting (issue 30), for the views and
 * exports of time on the CPU and waiting (tests/reports/test_cpu_wait.py):
 *   - 2 threads "cruncher" run crunch(), which computes until its thread
 *     has used CRUNCH_MS of CPU time (CLOCK_THREAD_CPUTIME_ID): on-CPU,
 *     no waiting;
 *   - 2 threads "idler" run idle_wait(), a pthread_cond_timedwait that
 *     nobody signals, IDLE_MS long: waiting, (almost) no CPU;
 *   - main joins them all.
 * Each thread prints nothing; main prints the CPU time each cruncher
 * measured itself ("crunch N ms"), the reference for the views.
 * argv[1], if given, scales both times (top's tests run it longer);
 * argv[2] "pieces": the idlers wait in pieces of PIECE_MS, so a snapshot
 * taken meanwhile holds ended waits beside the one in progress. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CRUNCH_MS 120
#define IDLE_MS 400
#define PIECE_MS 50

static int scale = 1, pieces;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

/* Not instrumented: crunch's time is all its own. */
__attribute__((no_instrument_function)) static double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Computes until this thread has used ms of CPU; returns what it used. */
double crunch(int ms);
double crunch(int ms)
{
    double start = thread_cpu_ms(), used = 0;
    volatile unsigned long x = 1;
    while (used < ms) {
        for (int i = 0; i < 100000; i++)
            x = x * 6364136223846793005ul + 1442695040888963407ul;
        used = thread_cpu_ms() - start;
    }
    return used;
}

void idle_wait(int ms);
void idle_wait(int ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&lock);
    while (pthread_cond_timedwait(&never, &lock, &until) == 0)
        ;
    pthread_mutex_unlock(&lock);
}

static double used[2];

static void *cruncher(void *arg)
{
    int k = (int)(long)arg;
    pthread_setname_np(pthread_self(), "cruncher");
    used[k] = crunch(CRUNCH_MS * scale);
    return NULL;
}

static void *idler(void *arg)
{
    pthread_setname_np(pthread_self(), "idler");
    for (int done = 0; pieces && done < IDLE_MS * scale; done += PIECE_MS)
        idle_wait(PIECE_MS);
    if (!pieces)
        idle_wait(IDLE_MS * scale);
    return arg;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        scale = atoi(argv[1]) > 0 ? atoi(argv[1]) : 1;
    pieces = argc > 2 && !strcmp(argv[2], "pieces");
    pthread_t t[4];
    for (long k = 0; k < 2; k++) {
        pthread_create(&t[k], NULL, cruncher, (void *)k);
        pthread_create(&t[2 + k], NULL, idler, NULL);
    }
    for (int k = 0; k < 4; k++)
        pthread_join(t[k], NULL);
    printf("crunch %.0f ms\ncrunch %.0f ms\n", used[0], used[1]);
    return 0;
}
