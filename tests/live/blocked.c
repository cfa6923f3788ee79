/* Every thread of the program blocked, in the shapes of an idle server
 * (tests/live/test_control.py).  argv[1]:
 *   sigsuspend  main and a worker in sigsuspend (an nginx master)
 *   join        main in pthread_join, two workers in pthread_cond_wait, a
 *               third in sigwait
 *   pause       main in pause()
 *   read        main in read() on stdin (a pipe)
 *   fork        main in waitpid, its forked child in pause()
 * Prints "ready PID" (fork: "ready PID CHILDPID") once the waits begin;
 * SIGUSR1 (read: a line on stdin; fork: SIGUSR1 to the child) releases
 * them.  Then prints how often each wait returned, and "view ok" when the
 * program's view of its signal mask and of SIGUSR1's flags is what it set
 * (SIGUSR1 without SA_RESTART: an EINTR nobody asked for would show). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t released;
static int wakes[4];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int go;
static sigset_t usr1, mask_set;

static void on_usr1(int sig) { (void)sig; released = 1; }

__attribute__((noinline)) void suspend_wait(int who)
{
    sigset_t none;
    sigemptyset(&none);
    while (!released) {
        sigsuspend(&none);
        wakes[who]++;
    }
}

__attribute__((noinline)) void cond_wait(int who)
{
    pthread_mutex_lock(&lock);
    while (!go) {
        pthread_cond_wait(&cond, &lock);
        wakes[who]++;
    }
    pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) void signal_wait(void)
{
    int sig;
    sigwait(&usr1, &sig);
    pthread_mutex_lock(&lock);
    go = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static void *suspender(void *arg) { (void)arg; suspend_wait(1); return NULL; }
static void *waiter(void *arg) { cond_wait((int)(long)arg); return NULL; }
static void *sigwaiter(void *arg) { (void)arg; signal_wait(); return NULL; }

__attribute__((noinline)) void pause_wait(void)
{
    while (!released) {
        pause();
        wakes[0]++;
    }
}

__attribute__((noinline)) long read_wait(int *err)
{
    char buf[64];
    ssize_t n = read(0, buf, sizeof buf);
    *err = n < 0 ? errno : 0;
    return (long)n;
}

static int view_ok(void)
{
    sigset_t now;
    struct sigaction sa;
    sigprocmask(SIG_BLOCK, NULL, &now);
    sigaction(SIGUSR1, NULL, &sa);
    for (int sig = 1; sig < 32; sig++)
        if (sigismember(&now, sig) != sigismember(&mask_set, sig))
            return 0;
    return sa.sa_handler == on_usr1 && !(sa.sa_flags & SA_RESTART);
}

static void ready(pid_t child)
{
    if (child)
        printf("ready %d %d\n", (int)getpid(), (int)child);
    else
        printf("ready %d\n", (int)getpid());
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "sigsuspend";
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;           /* no SA_RESTART */
    sigaction(SIGUSR1, &sa, NULL);
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);     /* let in by sigsuspend / sigwait only */
    mask_set = usr1;
    if (!strcmp(mode, "sigsuspend")) {
        pthread_t t;
        pthread_create(&t, NULL, suspender, NULL);
        ready(0);
        suspend_wait(0);
        pthread_kill(t, SIGUSR1);
        pthread_join(t, NULL);
        printf("sigsuspend %d %d\n", wakes[0], wakes[1]);
    } else if (!strcmp(mode, "join")) {
        pthread_t t[3];
        pthread_create(&t[0], NULL, waiter, (void *)1L);
        pthread_create(&t[1], NULL, waiter, (void *)2L);
        pthread_create(&t[2], NULL, sigwaiter, NULL);
        ready(0);
        for (int i = 0; i < 3; i++)
            pthread_join(t[i], NULL);
        printf("join %d %d\n", wakes[1], wakes[2]);
    } else if (!strcmp(mode, "pause")) {
        sigprocmask(SIG_UNBLOCK, &usr1, NULL);
        sigemptyset(&mask_set);
        ready(0);
        pause_wait();
        printf("pause %d\n", wakes[0]);
    } else if (!strcmp(mode, "read")) {
        sigprocmask(SIG_UNBLOCK, &usr1, NULL);
        sigemptyset(&mask_set);
        ready(0);
        int err;
        long n = read_wait(&err);
        printf("read %ld %d\n", n, err);
    } else if (!strcmp(mode, "fork")) {
        fflush(stdout);
        pid_t child = fork();
        if (child == 0) {
            sigprocmask(SIG_UNBLOCK, &usr1, NULL);
            pause_wait();
            _exit(wakes[0] == 1 ? 0 : 1);
        }
        ready(child);
        int status = 0, r;
        while ((r = waitpid(child, &status, 0)) < 0 && errno == EINTR)
            wakes[0]++;
        printf("fork %d %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1, wakes[0]);
    } else {
        fprintf(stderr, "usage: blocked sigsuspend|join|pause|read|fork\n");
        return 2;
    }
    printf("view %s\n", view_ok() ? "ok" : "changed");
    return 0;
}
