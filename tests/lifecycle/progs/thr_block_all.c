/* A thread blocks every signal with pthread_sigmask; exit still reaches it. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static pthread_barrier_t b;
static void *masked(void *a) {
    sigset_t all; sigfillset(&all); pthread_sigmask(SIG_BLOCK, &all, 0);
    sigset_t now; pthread_sigmask(SIG_BLOCK, 0, &now);
    printf("USR1 blocked=%d\n", sigismember(&now, SIGUSR1)); fflush(stdout);
    pthread_barrier_wait(&b);
    for (;;) sleep(100);
}
int main(void) {
    pthread_barrier_init(&b, 0, 2);
    pthread_t t; pthread_create(&t, 0, masked, 0);
    pthread_barrier_wait(&b);
    exit(0);
}
