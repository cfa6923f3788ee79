/*
 * signal_exit: a signal handler calls exit(7), as SIGINT/SIGTERM handlers
 * do (tests/core/test_robust.py).  The handler runs every 20 us and exits
 * on its 300th run, often while the interrupted code is inside hookit's
 * own enter/exit hook.  The profile written at that exit must still be
 * consistent.
 *
 *   main
 *     run_fib x...             fib(18) each round, until the exit
 *       fib ...
 *     (on_signal under whatever the signal interrupted)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include "progs.h"

volatile long sink;
static volatile sig_atomic_t handled;

KEEP void on_signal(int sig)
{
    (void)sig;
    if (++handled == 300)
        exit(7);
}

KEEP long fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

KEEP long run_fib(void) { return fib(18); }

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every_20us = { { 0, 20 }, { 0, 20 } };
    setitimer(ITIMER_REAL, &every_20us, NULL);
    for (;;)
        sink += run_fib();
}
