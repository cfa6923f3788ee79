/* A worker calls exit(6) while other threads are blocked (cond wait, sleep, join). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t b;
static void *waiter(void *a) { pthread_barrier_wait(&b); pthread_mutex_lock(&m); for (;;) pthread_cond_wait(&c, &m); }
static void *sleeper(void *a) { pthread_barrier_wait(&b); for (;;) sleep(100); }
static void *quitter(void *a) { pthread_barrier_wait(&b); usleep(50000); printf("worker exits\n"); exit(6); }
int main(void) {
    pthread_t t[4];
    pthread_barrier_init(&b, 0, 4);
    pthread_create(&t[0], 0, waiter, 0); pthread_create(&t[1], 0, sleeper, 0);
    pthread_create(&t[2], 0, quitter, 0);
    pthread_barrier_wait(&b);
    pthread_join(t[2], 0);
    return 0;
}
