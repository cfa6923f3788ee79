/*
 * fork_deep: fork three calls deep while the parent keeps working.  The
 * child's tree is main > outer > spawn (context, 0 calls) > child_work, never
 * what the parent did after the fork (the issue saw
 * main > parent_after1 > spawn > child_work).  Reference: refstack.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;
static pid_t child;

static void leaf(void) { sink++; }
static void child_work(void) { for (int i = 0; i < 10; i++) leaf(); }

static void spawn(void)
{
    pid_t p = fork();
    if (p == 0) {
        child_work();
        exit(0);
    }
    child = p;
}

static void outer(void) { spawn(); }
static void parent_after1(void) { for (int i = 0; i < 1000; i++) leaf(); }
static void spawn_like(void) { leaf(); }
static void parent_after2(void) { spawn_like(); waitpid(child, NULL, 0); }

int main(void)
{
    outer();
    parent_after1();
    parent_after2();
    printf("fork_deep: %ld\n", (long)sink);
    return 0;
}
