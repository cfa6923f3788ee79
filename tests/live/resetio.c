/* An I/O call and a wait already blocked when `ctl reset` or `ctl zerobase`
 * arrives (tests/live/test_reset_blocked.py): after the command, only their
 * time after its moment counts.
 *
 * main prints "ready PID", then blocks in read() on its stdin (a pipe the
 * test writes one line to when it wants the read to end), inside
 * read_input(); a worker blocks in nanosleep for SLEEP_MS inside
 * sleep_long(), started just before "ready".  Each prints its own
 * CLOCK_MONOTONIC readings around the blocking call ("read T0 T1",
 * "sleep T0 T1", ns), the clock a test's time.monotonic_ns() reads, so the
 * test compares hookit's figures with the program's own.  SIGUSR1 (blocked
 * in the worker) runs an instrumented handler, on_usr1, in main during its
 * read (SA_RESTART: the read goes on): its hook is where main applies a
 * command pending for it; "usr1 N" says how often it ran. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t sleep_t0, sleep_t1;
static volatile sig_atomic_t usr1;

__attribute__((noinline)) void on_usr1(int sig)
{
    (void)sig;
    usr1++;
}
static long sleep_ms;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) void sleep_long(void)
{
    struct timespec ts = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000L };
    sleep_t0 = mono_ns();
    while (nanosleep(&ts, &ts) != 0)
        ;
    sleep_t1 = mono_ns();
}

__attribute__((noinline)) void *worker(void *arg)
{
    sleep_long();
    return arg;
}

__attribute__((noinline)) ssize_t read_input(char *buf, size_t size, uint64_t *t0, uint64_t *t1)
{
    *t0 = mono_ns();
    ssize_t n = read(0, buf, size);
    *t1 = mono_ns();
    return n;
}

int main(int argc, char **argv)
{
    sleep_ms = argc > 1 ? atol(argv[1]) : 600;
    struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t usr, old;
    sigemptyset(&usr);
    sigaddset(&usr, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr, &old); /* the worker inherits it blocked */
    pthread_t th;
    if (pthread_create(&th, NULL, worker, NULL) != 0)
        return 1;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char buf[64];
    uint64_t t0, t1;
    ssize_t n = read_input(buf, sizeof buf, &t0, &t1);
    pthread_join(th, NULL);
    printf("read %llu %llu %zd\n", (unsigned long long)t0, (unsigned long long)t1, n);
    printf("sleep %llu %llu\n", (unsigned long long)sleep_t0, (unsigned long long)sleep_t1);
    printf("usr1 %d 0\n", (int)usr1);
    return 0;
}
