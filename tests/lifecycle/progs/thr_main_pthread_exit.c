/* main leaves with pthread_exit; the process ends when the last thread returns. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static pthread_barrier_t b;
static pthread_t first;
static void *work1(void *a) { pthread_barrier_wait(&b); usleep(50000); printf("worker 1 done\n"); fflush(stdout); return 0; }
static void *work2(void *a) { pthread_join(first, 0); printf("worker 2 done\n"); fflush(stdout); return 0; }
int main(void) {
    pthread_barrier_init(&b, 0, 2);
    pthread_t second;
    pthread_create(&first, 0, work1, 0);
    pthread_create(&second, 0, work2, 0);
    printf("main leaves\n"); fflush(stdout);
    pthread_barrier_wait(&b);
    pthread_exit(0);
}
