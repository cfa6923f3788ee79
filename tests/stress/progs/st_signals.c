/* Stress: a thread sends SIGUSR1 to the main thread as fast as it can for
 * SECONDS while the main thread runs instrumented code; the handler is
 * instrumented.  stderr: signals sent and handled, and the rate.
 *   st_signals SECONDS */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static volatile int stop;
static pid_t main_tid;
static long sent;

__attribute__((noinline)) static void count(void) { handled++; }
static void on_usr1(int sig) { (void)sig; count(); }

__attribute__((noinline)) static long step(long x) { return x * 31 + 7; }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *sender(void *arg)
{
    double end = now() + *(double *)arg;
    pid_t pid = getpid();
    while (now() < end) {
        for (int i = 0; i < 1000; i++)
            if (syscall(SYS_tgkill, pid, main_tid, SIGUSR1) == 0)
                sent++;
    }
    stop = 1;
    return NULL;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 10;
    struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    main_tid = (pid_t)syscall(SYS_gettid);
    pthread_t t;
    double t0 = now();
    pthread_create(&t, NULL, sender, &secs);
    long x = 0;
    while (!stop)
        x = step(x);
    pthread_join(t, NULL);
    double dt = now() - t0;
    /* let the last pending signal land */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    printf("signals done\n");
    fprintf(stderr, "sent %ld handled %ld rate %.0f/s\n", sent, (long)handled, sent / dt);
    return handled > 0 ? 0 : 1;
}
