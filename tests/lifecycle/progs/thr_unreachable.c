/* A thread blocks every signal with the raw system call: the exit cannot
 * reach it; it must be reported and the exit must not hang. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
static pthread_barrier_t b;
static void *hidden(void *a) {
    sigset_t all; sigfillset(&all);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, 8);
    pthread_barrier_wait(&b);
    for (;;) sleep(100);
}
int main(void) {
    pthread_barrier_init(&b, 0, 2);
    pthread_t t; pthread_create(&t, 0, hidden, 0);
    pthread_barrier_wait(&b);
    printf("exiting\n");
    return 4;
}
