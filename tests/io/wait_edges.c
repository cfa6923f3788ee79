/* Blocking calls whose time a signal handler interrupts, or that never
 * return normally (tests/io/test_wait_edges.py).  One case per argument:
 *
 *   io_handler    read() on a pipe blocks ~300 ms (a thread writes then);
 *                 at 100 ms SIGALRM's handler (SA_RESTART, so the read goes
 *                 on) spins 150 ms: the read's own time is ~150 ms.
 *   longjmp       poll() waits until SIGALRM at 100 ms; the handler spins
 *                 150 ms and siglongjmps back to the function that polled.
 *   cancel        a thread blocked in read() is cancelled after 120 ms; the
 *                 cleanup handler spins 30 ms.
 *   exit_blocked  a thread blocked in read() for good; main exits 150 ms
 *                 after it began.
 *
 * Each case prints the wall times it measured itself ("read_ms=...",
 * "spun_ms=..."), which the test compares with the profile, then "ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "ms_clock.h"

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static volatile double spun_ms, spun_cpu_ms;

/* Instrumented code that runs during the blocking call: 150 ms of wall
 * time (spun_ms), of which the thread had spun_cpu_ms on a CPU (less on a
 * loaded machine: what timer=sample can see). */
static void spin_handler(int sig)
{
    (void)sig;
    double t0 = now_ms(), c0 = cpu_ms();
    while (now_ms() - t0 < 150)
        ;
    spun_ms = now_ms() - t0;
    spun_cpu_ms = cpu_ms() - c0;
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
    printf("spun_cpu_ms=%.3f\n", spun_cpu_ms);
    return 0;
}

/* ---- longjmp ---------------------------------------------------------------------------------- */
static sigjmp_buf env;
static volatile double handler_at;

static void jump_handler(int sig)
{
    handler_at = now_ms();
    spin_handler(sig);
    siglongjmp(env, 1);
}

static void poll_then_jump(void)
{
    static volatile double t0;
    if (sigsetjmp(env, 1) == 0) {
        on_signal(SIGALRM, jump_handler, 0);
        t0 = now_ms();
        alarm_in_ms(100);
        poll(NULL, 0, 5000);
        printf("poll returned\n");
        return;
    }
    printf("waited_ms=%.3f\n", handler_at - t0);
    printf("spun_ms=%.3f\n", spun_ms);
    printf("spun_cpu_ms=%.3f\n", spun_cpu_ms);
}

static int longjmp_case(void)
{
    poll_then_jump();
    signal(SIGALRM, SIG_DFL);
    return 0;
}

/* ---- cancel ----------------------------------------------------------------------------------- */
static volatile double read_began, cleanup_at, cleanup_ms;

static void cleanup_spin(void *arg)
{
    (void)arg;
    cleanup_at = now_ms();
    while (now_ms() - cleanup_at < 30)
        ;
    cleanup_ms = now_ms() - cleanup_at;
}

static void cancelled_read(void)
{
    char c;
    pthread_cleanup_push(cleanup_spin, NULL);
    read_began = now_ms();
    if (read(pipefd[0], &c, 1) >= 0)
        printf("read returned\n");
    pthread_cleanup_pop(0);
}

static void *cancel_reader(void *arg)
{
    cancelled_read();
    return arg;
}

static int cancel_case(void)
{
    pthread_t th;
    void *ret = NULL;
    if (pipe(pipefd) != 0 || pthread_create(&th, NULL, cancel_reader, NULL) != 0)
        return 1;
    nap_ms(120);
    pthread_cancel(th);
    pthread_join(th, &ret);
    printf("cancelled=%d\n", ret == PTHREAD_CANCELED);
    printf("blocked_ms=%.3f\n", cleanup_at - read_began);
    printf("cleanup_ms=%.3f\n", cleanup_ms);
    return 0;
}

/* ---- exit_blocked ----------------------------------------------------------------------------- */
static void forever_read(void)
{
    char c;
    read_began = now_ms();
    if (read(pipefd[0], &c, 1) >= 0)
        printf("read returned\n");
}

static void *blocked_reader(void *arg)
{
    forever_read();
    return arg;
}

static int exit_blocked(void)
{
    pthread_t th;
    if (pipe(pipefd) != 0 || pthread_create(&th, NULL, blocked_reader, NULL) != 0)
        return 1;
    nap_ms(150);
    printf("blocked_ms=%.3f\n", now_ms() - read_began);
    printf("ok\n");
    fflush(stdout);
    exit(0);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    int rc = !strcmp(what, "io_handler") ? io_handler()
        : !strcmp(what, "longjmp")       ? longjmp_case()
        : !strcmp(what, "cancel")        ? cancel_case()
        : !strcmp(what, "exit_blocked")  ? exit_blocked()
                                         : 2;
    if (rc == 0)
        printf("ok\n");
    return rc;
}
