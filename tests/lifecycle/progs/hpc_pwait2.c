/* The application blocks every signal, then waits 400 ms in one wait whose
 * mask blocks them all too: epoll_pwait2 (argv[1] "epoll_pwait2"), or a
 * ppoll that _FORTIFY_SOURCE turns into __ppoll_chk ("ppoll_chk", built
 * with -O2 -D_FORTIFY_SOURCE=2).  A helper thread (every signal blocked)
 * sends SIGPROF to main every 5 ms.  A client holding SIGPROF through
 * monitor_sigaction must get those samples during the wait; the wait still
 * ends by its timeout, after its full time, without an EINTR; the
 * application reads back the mask it set.  Natively the SIGPROFs stay
 * pending (at most one is delivered, after the program ends). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

static pthread_t main_thread;
static atomic_int done;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *sender(void *arg)
{
    (void)arg;
    while (!atomic_load(&done)) {
        pthread_kill(main_thread, SIGPROF);
        usleep(5000);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "epoll_pwait2";
    sigset_t all, view;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    main_thread = pthread_self();
    pthread_t t;
    pthread_create(&t, NULL, sender, NULL);
    struct timespec tmo = { 0, 400000000 };
    double t0 = now();
    int r;
    errno = 0;
    if (!strcmp(mode, "ppoll_chk")) {
        /* A known size and a count the compiler cannot see: __ppoll_chk. */
        struct pollfd fds[1] = { { .fd = -1 } };
        volatile nfds_t n = 1;
        r = ppoll(fds, n, &tmo, &all);
    } else {
        int ep = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event ev;
        r = epoll_pwait2(ep, &ev, 1, &tmo, &all);
        close(ep);
    }
    int err = errno;
    double took = now() - t0;
    atomic_store(&done, 1);
    pthread_join(t, NULL);
    printf("%s %d errno=%s full=%d\n", mode, r, r < 0 ? strerror(err) : "-", took >= 0.395);
    sigprocmask(SIG_BLOCK, NULL, &view);
    int same = 1;
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP && sigismember(&all, sig) != sigismember(&view, sig))
            same = 0;
    printf("view same=%d\n", same);
    return 0;
}
