/* Blocks freed by another thread than the one that allocated them: two
 * producers allocate 20000 blocks each (malloc(16 + i % 100)) and hand them,
 * through one single-producer single-consumer ring each, to two consumers
 * that release them while the producers go on: every tenth block is first
 * grown with realloc(p, 200) (a free of the producer's block and a new
 * block of the consumer's), then freed.  Exact numbers per context. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 20000
#define RING 256

struct ring {
    void *slot[RING];
    unsigned head, tail;        /* head: next to fill (producer), tail: next to take */
};
static struct ring rings[2];

void *produce(void *arg)
{
    struct ring *r = arg;
    for (unsigned i = 0; i < N; i++) {
        void *p = malloc(16 + i % 100);
        memset(p, 1, 8);
        while (i - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) >= RING)
            ;
        r->slot[i % RING] = p;
        __atomic_store_n(&r->head, i + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

void *consume(void *arg)
{
    struct ring *r = arg;
    for (unsigned i = 0; i < N; i++) {
        while (__atomic_load_n(&r->head, __ATOMIC_ACQUIRE) == i)
            ;
        void *p = r->slot[i % RING];
        __atomic_store_n(&r->tail, i + 1, __ATOMIC_RELEASE);
        if (i % 10 == 0)
            p = realloc(p, 200);
        free(p);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    for (int k = 0; k < 2; k++) {
        pthread_create(&t[2 * k], NULL, consume, &rings[k]);
        pthread_create(&t[2 * k + 1], NULL, produce, &rings[k]);
    }
    for (int k = 0; k < 4; k++)
        pthread_join(t[k], NULL);
    ssize_t w = write(1, "done\n", 5);
    return w == 5 ? 0 : 1;
}
