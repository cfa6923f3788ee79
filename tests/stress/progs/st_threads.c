/* Stress: ALIVE threads alive at once, then SHORT short-lived threads (in
 * batches of 64).  stdout is deterministic; stderr gets the resident set
 * size after a tenth of the short-lived threads and at the end, to check
 * memory stays flat.
 *   st_threads ALIVE SHORT */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_barrier_t all_alive;

__attribute__((noinline)) static long leaf(long x) { return x * 3 + 1; }
__attribute__((noinline)) static long work(long x) { return leaf(x) + leaf(x + 1); }

static long rss_kb(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss * 4;
}

static void *alive(void *arg)
{
    long r = work((long)arg);
    pthread_barrier_wait(&all_alive);   /* every thread exists at once */
    return (void *)r;
}

static void *short_lived(void *arg)
{
    return (void *)work((long)arg);
}

static long run_threads(long n, void *(*fn)(void *), long first)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_t *t = malloc(n * sizeof *t);
    long sum = 0;
    for (long i = 0; i < n; i++)
        if (pthread_create(&t[i], &attr, fn, (void *)(first + i)) != 0) {
            perror("pthread_create");
            exit(2);
        }
    for (long i = 0; i < n; i++) {
        void *r;
        pthread_join(t[i], &r);
        sum += (long)r;
    }
    free(t);
    pthread_attr_destroy(&attr);
    return sum;
}

int main(int argc, char **argv)
{
    long nalive = argc > 1 ? atol(argv[1]) : 1000;
    long nshort = argc > 2 ? atol(argv[2]) : 100000;
    pthread_barrier_init(&all_alive, NULL, (unsigned)nalive);
    printf("alive %ld sum %ld\n", nalive, run_threads(nalive, alive, 0));
    long sum = 0, mid = 0;
    for (long done = 0; done < nshort; done += 64) {
        long n = nshort - done < 64 ? nshort - done : 64;
        sum += run_threads(n, short_lived, done);
        if (!mid && done + n >= nshort / 10)
            mid = rss_kb();
    }
    printf("short %ld sum %ld\n", nshort, sum);
    fprintf(stderr, "rss_kb %ld %ld\n", mid, rss_kb());
    return 0;
}
