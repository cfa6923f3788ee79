/* Six short threads, one after the other (their thread states are
 * recycled, and with threads_kept=1 their trees merged), each allocating
 * 100 x 32 bytes and freeing them in work() and keeping one block of 555
 * bytes; then a forked child allocates 3 x 1000 bytes in child_work() and
 * frees one.  Prints "parent done 0" (the child prints nothing). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 6
void *volatile keep[THREADS];
void *volatile sink;

void work(long k)
{
    for (int i = 0; i < 100; i++) {
        sink = malloc(32);
        memset(sink, 0, 8);
        free(sink);
    }
    keep[k] = malloc(555);
}

void *body(void *arg)
{
    work((long)arg);
    return NULL;
}

void child_work(void)
{
    void *volatile b[3];
    for (int i = 0; i < 3; i++)
        b[i] = malloc(1000);
    free(b[1]);
}

int main(void)
{
    for (long k = 0; k < THREADS; k++) {
        pthread_t t;
        if (pthread_create(&t, NULL, body, (void *)k) != 0 || pthread_join(t, NULL) != 0)
            return 1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        child_work();
        return 0;
    }
    int st;
    waitpid(pid, &st, 0);
    printf("parent done %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
