/* Exactly known allocations for tests/io, each kind in its own function.
 * Output goes through write(2) only, so stdio allocates no buffer.
 *   keep_blocks: malloc(1000) x 3 and calloc(10, 100), never freed (4000 bytes)
 *   churn:       malloc 500 -> realloc 2000 -> free; posix_memalign 256,
 *                aligned_alloc 128, memalign 64, valloc 100, reallocarray
 *                10 x 30 = 300, each freed: 7 allocations, 7 frees, 3348 bytes
 *   many:        1000 x (malloc 16, free)
 * and errno is checked to be unchanged around the first calls. */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile sink[16];

static void say(const char *s)
{
    ssize_t w = write(1, s, strlen(s));
    (void)w;
}

/* errno is the program's: hookit's bookkeeping (the first allocation of a
 * thread, a new context, a new high of the heap) must leave it alone. */
static void errno_kept(const char *what)
{
    if (errno != 4321)
        say(what);
    errno = 4321;
}

void keep_blocks(void)
{
    errno = 4321;
    for (int i = 0; i < 3; i++) {
        sink[i] = malloc(1000);
        errno_kept("BAD errno after malloc\n");
        memset(sink[i], 1, 1000);
    }
    sink[3] = calloc(10, 100);
    errno_kept("BAD errno after calloc\n");
}

void churn(void)
{
    char *p = malloc(500);
    sink[4] = p;
    errno = 4321;
    p = realloc(p, 2000);
    errno_kept("BAD errno after realloc\n");
    sink[4] = p;
    free(sink[4]);
    errno_kept("BAD errno after free\n");
    void *q = NULL;
    if (posix_memalign(&q, 64, 256) != 0 || ((unsigned long)q & 63))
        say("BAD posix_memalign\n");
    sink[5] = q;
    free(sink[5]);
    sink[6] = aligned_alloc(64, 128);
    free(sink[6]);
    sink[7] = memalign(32, 64);
    free(sink[7]);
    sink[8] = valloc(100);
    if ((unsigned long)sink[8] & 4095)
        say("BAD valloc\n");
    free(sink[8]);
    sink[9] = reallocarray(NULL, 10, 30);
    free(sink[9]);
}

void many(void)
{
    for (int i = 0; i < 1000; i++) {
        sink[10] = malloc(16);
        free(sink[10]);
    }
}

int main(void)
{
    keep_blocks();
    churn();
    many();
    say("done\n");
    return 0;
}
