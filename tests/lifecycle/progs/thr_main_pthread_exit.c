/* main leaves with pthread_exit; the process ends when the last thread returns. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *work(void *a) { usleep(100000 * (long)a); printf("worker %ld done\n", (long)a); fflush(stdout); return 0; }
int main(void) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, work, (void *)(i + 1));
    printf("main leaves\n"); fflush(stdout);
    pthread_exit(0);
}
