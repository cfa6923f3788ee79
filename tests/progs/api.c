/*
 * api: the application API of include/hookit/hookit.h (tests/core/test_api.py).
 *
 *   main
 *     setup       x1      collected (collection starts on)
 *     skipped     x3      after hookit_stop(): not in the profile
 *     solve       x2      after hookit_start()
 *       step      x3 each
 *     hookit_flush()      writes a profile now, collection goes on
 *     after_flush x1
 *
 * Prints what hookit_collecting() said in each phase.  With
 * HOOKIT_PROFILING=0, collection starts off: setup is not collected and
 * main's entry was never seen.
 */
#include <stdio.h>
#include "hookit/hookit.h"
#include "progs.h"

volatile long sink;

KEEP void setup(void) { sink++; }
KEEP void skipped(void) { sink++; }
KEEP void step(void) { sink++; }
KEEP void after_flush(void) { sink++; }

KEEP void solve(void)
{
    for (int i = 0; i < 3; i++)
        step();
}

int main(void)
{
    int at_start = hookit_collecting();
    setup();
    hookit_stop();
    int stopped = hookit_collecting();
    for (int i = 0; i < 3; i++)
        skipped();
    hookit_start();
    int started = hookit_collecting();
    solve();
    solve();
    hookit_flush();
    after_flush();
    printf("api: %d %d %d\n", at_start, stopped, started);
    return 0;
}
