/* The program of the fault and security tests (tests/reliability): calls a
 * few instrumented functions, recurses DEPTH deep (a bigger profile, slower
 * to write), prints one line and exits with status 3, so a test can see the
 * exit status is kept.  With a second argument, writes "done" to stdout and
 * flushes before returning (a point to kill it from).
 *   fault_app [DEPTH [signal-done]] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static long leaf(long x) { return x * 5 + 1; }
__attribute__((noinline)) static long down(long n) { return n ? down(n - 1) + leaf(n) : 0; }

static void *run(void *arg) { return (void *)down((long)arg); }

int main(int argc, char **argv)
{
    long depth = argc > 1 ? atol(argv[1]) : 10;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)depth * 256 + (1 << 20));
    pthread_t t;
    void *r;
    pthread_create(&t, &attr, run, (void *)depth);
    pthread_join(t, &r);
    printf("fault_app %ld\n", (long)r);
    if (argc > 2) {
        printf("done\n");
        fflush(stdout);
    }
    return 3;
}
