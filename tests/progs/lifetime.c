/*
 * lifetime: instrumented code before and after main (tests/core/test_lifetime.py).
 *
 *   early_init [libearly.so]     the library's constructor (see early_lib.c)
 *     early_helper x3
 *   prog_init                    this program's constructor
 *   main
 *     work x2
 *   at_exit_handler              registered with atexit, runs after main
 *     late_helper x2
 *   prog_fini                    this program's destructor
 *     late_helper x1
 *
 * The lifecycle layer ends the process when main returns or exit is called,
 * before atexit handlers and destructors run (as with libmonitor); the
 * profiler keeps collecting them and completes the profile from libhookit's
 * destructor, so the last two are in the profile too.  They print a line to
 * show they ran.
 */
#include <stdio.h>
#include <stdlib.h>
#include "progs.h"

volatile long sink;
extern int early_value;

KEEP void late_helper(void) { sink++; }
KEEP void work(void) { sink += 2; }

KEEP void at_exit_handler(void)
{
    late_helper();
    late_helper();
    printf("lifetime: atexit handler ran\n");
}

__attribute__((constructor)) KEEP void prog_init(void) { sink = 100; }

__attribute__((destructor)) KEEP void prog_fini(void)
{
    late_helper();
    printf("lifetime: destructor ran\n");
    fflush(stdout);
}

int main(void)
{
    atexit(at_exit_handler);
    work();
    work();
    printf("lifetime: early=%d sink=%ld\n", early_value, (long)sink);
    return 0;
}
