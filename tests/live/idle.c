/* Every thread blocked in sigsuspend inside an instrumented function (an
 * idle server master).  Each return from sigsuspend is counted; SIGUSR1
 * ends the wait: main prints how many times each thread woke up. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

static volatile sig_atomic_t done;
static int wakes[2];

static void on_usr1(int sig) { (void)sig; done = 1; }

__attribute__((noinline)) void idle_wait(int who)
{
    sigset_t none;
    sigemptyset(&none);
    while (!done) {
        sigsuspend(&none);
        wakes[who]++;
    }
}

static void *worker(void *arg) { (void)arg; idle_wait(1); return NULL; }

int main(void)
{
    signal(SIGUSR1, on_usr1);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);     /* only sigsuspend lets it in */
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    printf("idle\n");
    fflush(stdout);
    idle_wait(0);
    pthread_kill(t, SIGUSR1);
    pthread_join(t, NULL);
    printf("wakes %d %d\n", wakes[0], wakes[1]);
    return 0;
}
