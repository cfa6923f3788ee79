/* Milliseconds for the wait test programs (known_wait.c, wait_edges.c):
 * what the program itself measures, the reference hookit's wait times are
 * compared with.  Each program is compiled alone; this header is theirs. */
#ifndef TESTS_IO_MS_CLOCK_H
#define TESTS_IO_MS_CLOCK_H

#include <errno.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Sleeps ms whole, through signals. */
static void nap_ms(int ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

#endif
