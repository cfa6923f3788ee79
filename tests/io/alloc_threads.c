/* Four threads allocate and free at once (20000 x malloc(24 + i % 40) and
 * free each), and each keeps one block of 777 bytes: exact totals through
 * the shared live-block table. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile keep[4];
void *volatile sink[4];

void *hammer(void *arg)
{
    long k = (long)arg;
    for (int i = 0; i < 20000; i++) {
        sink[k] = malloc(24 + i % 40);
        memset(sink[k], 0, 8);
        free(sink[k]);
    }
    keep[k] = malloc(777);
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    for (long k = 0; k < 4; k++)
        pthread_create(&t[k], NULL, hammer, (void *)k);
    for (int k = 0; k < 4; k++)
        pthread_join(t[k], NULL);
    ssize_t w = write(1, "done\n", 5);
    return w == 5 ? 0 : 1;
}
