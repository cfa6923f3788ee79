/* A program with a known call flow for the trace tests: threads, recursion,
 * a call that takes a few milliseconds (for threshold=), optional fork. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int sink;

int leaf(int x) { sink += x; return x * 2; }

int mid(int x)
{
    int s = 0;
    for (int i = 0; i < 3; i++)
        s += leaf(x + i);
    return s;
}

int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

void slow(void)
{
    struct timespec ts = { 0, 5 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    leaf(1);
}

void *worker(void *arg)
{
    (void)arg;
    mid(5);
    return NULL;
}

int main(int argc, char **argv)
{
    int s = mid(1) + fib(3);
    slow();
    if (argc > 1 && !strcmp(argv[1], "thread")) {
        pthread_t t;
        pthread_create(&t, NULL, worker, NULL);
        pthread_join(t, NULL);
    }
    if (argc > 1 && !strcmp(argv[1], "fork")) {
        pid_t pid = fork();
        if (pid == 0) {
            leaf(7);
            exit(0);
        }
        waitpid(pid, NULL, 0);
        mid(2);
    }
    if (argc > 1 && !strcmp(argv[1], "many")) {
        for (int i = 0; i < 2000000; i++)
            leaf(i);
    }
    if (argc > 1 && !strcmp(argv[1], "abort")) {
        mid(3);
        abort();
    }
    if (argc > 1 && !strcmp(argv[1], "exec")) {
        mid(4);
        fflush(stdout);
        execl("/bin/true", "true", (char *)NULL);
        return 111;
    }
    printf("%d\n", s);
    return 0;
}
