/* Blocking calls whose time a signal handler interrupts, or that never
 * return normally (tests/io/test_wait_edges.py).  One case per argument:
 *
 *   io_handler    read() on a pipe blocks ~300 ms (a thread writes then);
 *                 at 100 ms SIGALRM's handler (SA_RESTART, so the read goes
 *                 on) spins 150 ms: the read's own time is ~150 ms.
 *
 * Each case prints the wall times it measured itself ("read_ms=...",
 * "spun_ms=..."), which the test compares with the profile, then "ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void nap_ms(int ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static volatile double spun_ms;

/* Instrumented code that runs during the blocking call: 150 ms on CPU. */
static void spin_handler(int sig)
{
    (void)sig;
    double t0 = now_ms();
    while (now_ms() - t0 < 150)
        ;
    spun_ms = now_ms() - t0;
}

static void on_signal(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigaction(sig, &sa, NULL);
}

static void alarm_in_ms(int ms)
{
    struct itimerval it = { { 0, 0 }, { ms / 1000, (ms % 1000) * 1000 } };
    setitimer(ITIMER_REAL, &it, NULL);
}

/* ---- io_handler ------------------------------------------------------------------------------ */
static int pipefd[2];

static void *late_writer(void *arg)
{
    (void)arg;
    nap_ms(300);
    if (write(pipefd[1], "x", 1) != 1)
        abort();
    return NULL;
}

static void blocking_read(void)
{
    char c;
    double t0 = now_ms();
    ssize_t n = read(pipefd[0], &c, 1);
    printf("read_ms=%.3f\n", now_ms() - t0);
    if (n != 1)
        printf("read returned %zd (%s)\n", n, strerror(errno));
}

static int io_handler(void)
{
    pthread_t th;
    if (pipe(pipefd) != 0 || pthread_create(&th, NULL, late_writer, NULL) != 0)
        return 1;
    on_signal(SIGALRM, spin_handler, SA_RESTART);
    alarm_in_ms(100);
    blocking_read();
    pthread_join(th, NULL);
    printf("spun_ms=%.3f\n", spun_ms);
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    int rc = !strcmp(what, "io_handler") ? io_handler() : 2;
    if (rc == 0)
        printf("ok\n");
    return rc;
}
