/* The application blocks every signal, then waits with masks that block
 * them all: ppoll, pselect and epoll_pwait with a 200 ms timeout, and
 * sigsuspend with every signal but SIGUSR1.  A helper thread (every signal
 * blocked too) sends SIGPROF to main every 5 ms.  A client holding SIGPROF
 * through monitor_sigaction must get those samples during the waits; the
 * timed waits still end by their timeout, after their full time, without
 * an EINTR; the application reads back the mask it set.  Natively the
 * SIGPROFs stay pending.  How often sigsuspend returned goes to stderr. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static pthread_t main_thread;
static atomic_int phase;                /* 1: main in sigsuspend; 2: done */
static volatile sig_atomic_t woken;

static void on_usr1(int sig) { (void)sig; woken = 1; }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *sender(void *arg)
{
    (void)arg;
    int in_suspend = 0;
    while (atomic_load(&phase) < 2) {
        pthread_kill(main_thread, SIGPROF);
        usleep(5000);
        if (atomic_load(&phase) == 1 && ++in_suspend == 40)
            pthread_kill(main_thread, SIGUSR1);
    }
    return NULL;
}

static void report(const char *what, int r, int err, double t0)
{
    double took = now() - t0;
    printf("%s %d errno=%s full=%d\n", what, r, r < 0 ? strerror(err) : "-", took >= 0.195);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t all, but_usr1, view;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    but_usr1 = all;
    sigdelset(&but_usr1, SIGUSR1);
    main_thread = pthread_self();
    pthread_t t;
    pthread_create(&t, NULL, sender, NULL);

    struct timespec tmo = { 0, 200000000 };
    double t0 = now();
    errno = 0;
    int r = ppoll(NULL, 0, &tmo, &all);
    report("ppoll", r, errno, t0);
    t0 = now();
    r = pselect(0, NULL, NULL, NULL, &tmo, &all);
    report("pselect", r, errno, t0);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev;
    t0 = now();
    r = epoll_pwait(ep, &ev, 1, 200, &all);
    report("epoll_pwait", r, errno, t0);
    close(ep);

    int returns = 0;
    atomic_store(&phase, 1);
    while (!woken) {
        sigsuspend(&but_usr1);
        returns++;
    }
    atomic_store(&phase, 2);
    pthread_join(t, NULL);
    printf("sigsuspend woken\n");
    fprintf(stderr, "sigsuspend returns=%d\n", returns);
    sigprocmask(SIG_BLOCK, NULL, &view);
    int same = 1;
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP && sigismember(&all, sig) != sigismember(&view, sig))
            same = 0;
    printf("view same=%d\n", same);
    return 0;
}
