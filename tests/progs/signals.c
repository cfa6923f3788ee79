/*
 * signals: instrumented code in a signal handler interrupting instrumented
 * code on the same thread, thousands of times (tests/core/test_robust.py).
 * Some signals land inside hookit's own enter/exit hooks: the profiler must
 * drop those events (and count them), never corrupt the tree.
 *
 *   main
 *     run_fib x ROUNDS         fib(18) each round: exact counts per depth
 *       fib ...
 *     (on_signal -> tick_helper, under whatever the signal interrupted)
 *
 * A 20 us interval timer (SIGALRM, high resolution) drives the handler.
 * Prints the number of handler runs.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include "progs.h"

#define ROUNDS 100

volatile long sink;
static volatile sig_atomic_t handled;

KEEP void tick_helper(void) { sink++; }

KEEP void on_signal(int sig)
{
    (void)sig;
    handled++;
    tick_helper();
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
    struct itimerval every_20us = { { 0, 20 }, { 0, 20 } }, off;
    memset(&off, 0, sizeof off);
    setitimer(ITIMER_REAL, &every_20us, NULL);
    long r = 0;
    for (int i = 0; i < ROUNDS; i++)
        r += run_fib();
    setitimer(ITIMER_REAL, &off, NULL);
    printf("signals: fib=%ld handled=%d\n", r / ROUNDS, (int)handled);
    return 0;
}
