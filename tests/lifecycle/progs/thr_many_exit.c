/* Eight threads call exit(0) at the same moment. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static pthread_barrier_t b;
static void *go(void *a) { pthread_barrier_wait(&b); exit(0); }
int main(void) {
    pthread_t t[8];
    pthread_barrier_init(&b, 0, 9);
    for (int i = 0; i < 8; i++) pthread_create(&t[i], 0, go, 0);
    printf("released\n"); fflush(stdout);
    pthread_barrier_wait(&b);
    for (;;) pthread_join(t[0], 0);
}
