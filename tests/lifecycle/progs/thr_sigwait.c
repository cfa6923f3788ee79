/* A thread parked in sigwait gets its signals; exit still reaches it. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static pthread_barrier_t b;
static void *waiter(void *a) {
    sigset_t all; sigfillset(&all);
    pthread_barrier_wait(&b);
    int sig; sigwait(&all, &sig);
    printf("sigwait got %d\n", sig); fflush(stdout);
    pthread_barrier_wait(&b);
    sigwait(&all, &sig);
    printf("second sigwait got %d\n", sig);
    return 0;
}
int main(void) {
    sigset_t all; sigfillset(&all); pthread_sigmask(SIG_BLOCK, &all, 0);
    pthread_barrier_init(&b, 0, 2);
    pthread_t t; pthread_create(&t, 0, waiter, 0);
    pthread_barrier_wait(&b);
    pthread_kill(t, SIGUSR1);
    pthread_barrier_wait(&b);
    usleep(20000);
    return 0;
}
