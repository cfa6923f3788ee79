/*
 * daemonize: daemon() forks, the parent leaves with _exit inside libc at once,
 * the child carries on.  Expected (cases.py): the parent's profile has
 * main > prepare and main > go_daemon; the child's has main > go_daemon as
 * context and main > run_daemon > work x3 (never libjprof's own functions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile long sink;

static void prepare(void) { sink++; }
static void go_daemon(void)
{
    if (daemon(1, 0) != 0)
        exit(1);
}
static void work(void) { sink++; }
static void run_daemon(void) { for (int i = 0; i < 3; i++) work(); }

int main(void)
{
    prepare();
    go_daemon();
    run_daemon();
    return 0;
}
