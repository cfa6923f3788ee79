/*
 * chdir: changes directory to argv[1] before doing its work, as daemons
 * and build tools do (tests/core/test_calls.py).  HOOKIT_OUTPUT, and its
 * default (the current directory), are read at start: the profile belongs
 * where the program was started, not where it ended up.
 *
 *   main
 *     work x1
 */
#include <stdio.h>
#include <unistd.h>
#include "progs.h"

volatile long sink;

KEEP void work(void) { sink++; }

int main(int argc, char **argv)
{
    if (argc < 2 || chdir(argv[1]) != 0) {
        perror("chdir");
        return 9;
    }
    work();
    printf("chdir: done\n");
    return 0;
}
