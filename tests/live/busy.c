/* A program to watch live: THREADS worker threads (argv[1], default 2) and
 * the main thread call small functions in a loop for SECONDS (argv[2],
 * default 3; 0 = until killed).  With a third argument "pause", main
 * sleeps in a function that stays open (a blocked thread).  Prints
 * "ready" once every thread runs. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static double seconds = 3;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void leaf(int i) { sink += (unsigned long)i; }

__attribute__((noinline)) int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__attribute__((noinline)) void inner(int n)
{
    for (int i = 0; i < n; i++)
        leaf(i);
}

__attribute__((noinline)) void outer(void)
{
    inner(20);
    sink += (unsigned long)fib(12);
}

__attribute__((noinline)) void spin(void)
{
    double end = now() + seconds;
    while (seconds == 0 || now() < end)
        for (int i = 0; i < 50; i++)
            outer();
}

static void *worker(void *arg)
{
    (void)arg;
    spin();
    return NULL;
}

/* Called once, first: gone after `ctl reset`, kept with 0 calls after
 * `ctl zerobase`. */
__attribute__((noinline)) void warmup(void) { inner(5); }

__attribute__((noinline)) void blocked(void)
{
    sleep((unsigned)(seconds > 0 ? seconds : 1000000));
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    if (argc > 2)
        seconds = atof(argv[2]);
    pthread_t t[64];
    warmup();
    for (int i = 0; i < threads && i < 64; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    if (argc > 3 && !strcmp(argv[3], "pause"))
        blocked();
    else
        spin();
    for (int i = 0; i < threads && i < 64; i++)
        pthread_join(t[i], NULL);
    return 0;
}
