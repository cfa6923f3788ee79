/* A program to watch live: THREADS worker threads (argv[1], default 2) and
 * the main thread call small functions in a loop for SECONDS (argv[2],
 * default 3; 0 = until killed).  With a third argument "pause", main
 * sleeps in a function that stays open (a blocked thread); "wide": main
 * builds a tree of 2^13 calling contexts and runs it over and over (a
 * thread always mid-update for a reader); "fork": main forks a child that
 * spins too, and waits for it; "execfail": an exec that fails, then spin;
 * "exec": main execs this program again (without "exec"). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
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

void wide_b(int d);
__attribute__((noinline)) void wide_a(int d)
{
    if (d) {
        wide_a(d - 1);
        wide_b(d - 1);
    }
}

__attribute__((noinline)) void wide_b(int d)
{
    if (d) {
        wide_b(d - 1);
        wide_a(d - 1);
    }
}

__attribute__((noinline)) void wide(void)
{
    double end = now() + seconds;
    while (seconds == 0 || now() < end)
        wide_a(12);
}

__attribute__((noinline)) void blocked(void)
{
    sleep((unsigned)(seconds > 0 ? seconds : 1000000));
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    if (argc > 2)
        seconds = atof(argv[2]);
    static pthread_t t[64];     /* static: keep main's frame small (see the report on large frames) */
    warmup();
    for (int i = 0; i < threads && i < 64; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    const char *mode = argc > 3 ? argv[3] : "";
    if (!strcmp(mode, "pause")) {
        blocked();
    } else if (!strcmp(mode, "wide")) {
        wide();
    } else if (!strcmp(mode, "fork")) {
        pid_t child = fork();
        spin();
        if (child == 0)
            return 0;
        waitpid(child, NULL, 0);
    } else if (!strcmp(mode, "execfail")) {
        char *args[] = { "/nonexistent/program", NULL };
        execv(args[0], args);
        spin();
    } else if (!strcmp(mode, "exec")) {
        spin();
        char *args[] = { argv[0], argv[1], argv[2], NULL };
        execv("/proc/self/exe", args);
        return 1;
    } else {
        spin();
    }
    for (int i = 0; i < threads && i < 64; i++)
        pthread_join(t[i], NULL);
    return 0;
}
