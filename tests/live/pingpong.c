/* Two processes that hand a token back and forth over pipes, for a job-
 * level snapshot (tests/live/test_live_set.py):
 *
 *   pingpong SECONDS
 *
 * The parent calls ping() and then passes the token; the child (a fork)
 * waits for it, calls pong() and passes it back.  At every moment the
 * parent's completed pings minus the child's completed pongs is 0 or 1:
 * a snapshot of both at one moment shows that, one taken a process after
 * the other need not.  The parent prints "ready" once the child runs. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void ping(void)
{
    sink++;
}
__attribute__((noinline)) void pong(void)
{
    sink++;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3;
    int to_child[2], to_parent[2];
    char token = 't';
    if (pipe(to_child) || pipe(to_parent))
        return 1;
    pid_t child = fork();
    if (child == 0) {
        close(to_child[1]); /* the parent's end: its death is our end of file */
        close(to_parent[0]);
        while (read(to_child[0], &token, 1) == 1 && token == 't') {
            pong();
            if (write(to_parent[1], &token, 1) != 1)
                return 1;
        }
        return 0;
    }
    close(to_child[0]);
    close(to_parent[1]);
    printf("ready\n");
    fflush(stdout);
    double end = now() + seconds;
    while (now() < end) {
        ping();
        if (write(to_child[1], &token, 1) != 1 || read(to_parent[0], &token, 1) != 1)
            return 1;
    }
    token = 'q';
    if (write(to_child[1], &token, 1) != 1)
        return 1;
    waitpid(child, NULL, 0);
    return 0;
}
