/*
 * forks: one profile per process (tests/core/test_calls.py).
 *
 *   parent: main -> before_fork x1, main -> in_parent x2
 *   child:  main -> in_child x3, exits 4 through exit()
 *
 * The child's profile holds what the child did (its tree restarts from the
 * path it forked on: main, as context with no call); the parent's what the parent did.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "progs.h"

volatile long sink;

KEEP void before_fork(void) { sink++; }
KEEP void in_parent(void) { sink++; }
KEEP void in_child(void) { sink++; }

int main(void)
{
    before_fork();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 3; i++)
            in_child();
        exit(4);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    for (int i = 0; i < 2; i++)
        in_parent();
    printf("forks: child %d exited %d\n", (int)pid, WEXITSTATUS(status));
    return 0;
}
