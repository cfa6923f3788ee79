/*
 * fork_many: N forks (argv[1]) from one call site while the parent keeps
 * calling; at most 8 children alive.  Every child: main > loop_step > spawn
 * (context) > child_work > leaf x5.  Reference: refstack.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;
static int alive;

static void leaf(void) { sink++; }
static void child_work(void) { for (int i = 0; i < 5; i++) leaf(); }
static void parent_work(void) { for (int i = 0; i < 20; i++) leaf(); }

static void spawn(void)
{
    pid_t p = fork();
    if (p == 0) {
        child_work();
        exit(0);
    }
    if (p > 0)
        alive++;
}

static void reap(void)
{
    while (alive > 0 && waitpid(-1, NULL, alive >= 8 ? 0 : WNOHANG) > 0)
        alive--;
}

static void loop_step(void)
{
    spawn();
    parent_work();
    reap();
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    for (int i = 0; i < n; i++)
        loop_step();
    while (alive > 0 && wait(NULL) > 0)
        alive--;
    printf("fork_many: %ld\n", (long)sink);
    return 0;
}
