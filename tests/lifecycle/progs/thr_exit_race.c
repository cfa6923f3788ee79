/* Four threads call exit at the same moment while main waits in join. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_barrier_t go;

static void *racer(void *arg)
{
    pthread_barrier_wait(&go);
    exit(0);
}

int main(void)
{
    pthread_t t[4];
    /* Printed before the racers exist: glibc's exit flushes stdout
     * without its lock, so an exit racing a flush in main could write the
     * buffer twice, with or without hookit. */
    printf("racing\n");
    fflush(stdout);
    pthread_barrier_init(&go, NULL, 4);
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, racer, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    return 1;
}
