/* The application blocks every signal (both calls), then works: a client's
 * SIGPROF sampler (monitor_sigaction) must still get its samples, while the
 * application reads back exactly the mask it set. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

static volatile unsigned long sink;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void work(double secs)
{
    double end = cpu_now() + secs;
    while (cpu_now() < end)
        for (int i = 0; i < 10000; i++)
            sink += i;
}

static int same_as(const sigset_t *want, const sigset_t *got)
{
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP && sigismember(want, sig) != sigismember(got, sig))
            return 0;
    return 1;
}

static void *thread(void *arg)
{
    sigset_t all, now;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, NULL);
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    printf("thread view same=%d\n", same_as(&all, &now));
    work(0.2);
    return NULL;
}

int main(void)
{
    sigset_t all, now, prof;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("main view same=%d prof=%d\n", same_as(&all, &now), sigismember(&now, SIGPROF));
    fflush(stdout);
    pthread_t t;
    pthread_create(&t, NULL, thread, NULL);
    pthread_join(t, NULL);
    work(0.3);
    /* unblocking one signal and reading back */
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    sigprocmask(SIG_UNBLOCK, &prof, &now);
    printf("old had prof=%d\n", sigismember(&now, SIGPROF));
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("now prof=%d usr1=%d\n", sigismember(&now, SIGPROF), sigismember(&now, SIGUSR1));
    sigprocmask(SIG_BLOCK, &prof, NULL);
    return 0;
}
