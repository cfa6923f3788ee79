/*
 * exit_late: the program's code after exit() began (tests/core/test_exact.py).
 *
 *   main > work
 *   handler > work           the atexit handler
 *   fini > work              a destructor
 *
 * argv[1] "_exit": the handler leaves by _exit(3) (no destructor runs);
 * "abort": it dies by SIGABRT.  Either way the profile written when exit()
 * began is there.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "progs.h"

volatile long sink;
static const char *how = "";

KEEP void work(void) { sink++; }

KEEP void handler(void)
{
    work();
    if (!strcmp(how, "_exit"))
        _exit(3);
    if (!strcmp(how, "abort"))
        abort();
}

__attribute__((destructor)) KEEP void fini(void) { work(); }

int main(int argc, char **argv)
{
    how = argc > 1 ? argv[1] : "";
    atexit(handler);
    work();
    return 0;
}
