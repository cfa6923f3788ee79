/* Threads that keep running instrumented code after the profiler has ended
 * them: their pthread key destructors (run after the thread's start routine
 * returned, so after the lifecycle's fini_thread) call an instrumented
 * function many times, all threads at once.  Their hooks must be ignored
 * without touching anything shared: they once raced on one shared "ended"
 * state and crashed.  Prints the destructors' sum; exits 0. */
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define CALLS 300000

static pthread_key_t key;
static pthread_barrier_t ready;
static volatile unsigned long sum[THREADS];

__attribute__((noinline)) unsigned long step(unsigned long x) { return x * 3 + 1; }

static void destructor(void *arg)
{
    int i = (int)(long)arg - 1;
    unsigned long x = 0;
    for (int k = 0; k < CALLS; k++)
        x = step(x) & 0xffff;
    sum[i] = x;
}

static void *worker(void *arg)
{
    pthread_setspecific(key, arg);
    step(1);
    pthread_barrier_wait(&ready);
    return NULL;
}

int main(void)
{
    pthread_t th[THREADS];
    pthread_key_create(&key, destructor);
    pthread_barrier_init(&ready, NULL, THREADS);
    for (long i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)(i + 1));
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    unsigned long total = 0;
    for (int i = 0; i < THREADS; i++)
        total += sum[i];
    printf("ended_hooks: %lu\n", total);
    return 0;
}
