/*
 * fork_path: a fork from deep in a call while the parent goes on calling
 * (tests/core/test_exact.py).  The child's tree is the path at the fork as
 * context (no calls) and what the child did:
 *
 *   parent: main > outer > spawn;  main > parent_after x N
 *   child:  main > outer > spawn (0 calls each) > child_work
 *
 * argv[1]: how many children (each forked from the same path), argv[2]:
 * "daemon" to fork with daemon() instead (the parent exits at once).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "progs.h"

volatile long sink;
KEEP void child_work(void) { sink++; }
KEEP void parent_after(void) { for (volatile int i = 0; i < 100; i++) sink++; }

KEEP pid_t spawn(int use_daemon)
{
    if (use_daemon) {
        if (daemon(1, 1) != 0)
            exit(2);
        child_work();
        exit(0);
    }
    pid_t p = fork();
    if (p == 0) {
        usleep(2000);           /* the parent moves on meanwhile */
        child_work();
        exit(0);
    }
    return p;
}

KEEP pid_t outer(int use_daemon) { return spawn(use_daemon); }

int main(int argc, char **argv)
{
    int children = argc > 1 ? atoi(argv[1]) : 1;
    int use_daemon = argc > 2 && !strcmp(argv[2], "daemon");
    for (int i = 0; i < children; i++) {
        outer(use_daemon);
        for (int j = 0; j < 20; j++)
            parent_after();
    }
    while (wait(NULL) > 0)
        ;
    return 0;
}
