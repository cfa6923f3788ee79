/* More threads over the run than libjprof once kept per-thread counters
 * for (65536): 70000 short threads, one after the other, each allocating
 * 10 + (k % 50) bytes and freeing them in work().  Every thread counts per
 * context, in the totals and in the live heap. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS 70000
void *volatile sink;

void work(long k)
{
    sink = malloc(10 + k % 50);
    memset(sink, 0, 8);
    free(sink);
}

void *body(void *arg)
{
    work((long)arg);
    return NULL;
}

int main(void)
{
    for (long k = 0; k < THREADS; k++) {
        pthread_t t;
        if (pthread_create(&t, NULL, body, (void *)k) != 0 || pthread_join(t, NULL) != 0)
            return 1;
    }
    ssize_t w = write(1, "done\n", 5);
    return w == 5 ? 0 : 1;
}
