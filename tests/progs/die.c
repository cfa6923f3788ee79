/*
 * die: death by a signal from inside nested frames (tests/core/test_calls.py).
 * `die term|segv|abort`: main -> outer -> inner, which prints a line and
 * raises SIGTERM, dereferences NULL, or aborts.  The process must die by
 * that same signal, and its profile still be written with the open frames.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "progs.h"

volatile long sink;

KEEP void inner(const char *how)
{
    printf("die: %s\n", how);
    fflush(stdout);
    if (!strcmp(how, "term"))
        raise(SIGTERM);
    if (!strcmp(how, "segv"))
        *(volatile int *)(sink - sink) = 1;
    if (!strcmp(how, "abort"))
        abort();
}

KEEP void outer(const char *how) { inner(how); }

int main(int argc, char **argv)
{
    outer(argc > 1 ? argv[1] : "term");
    return 0;
}
