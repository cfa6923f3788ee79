/* A worker thread execs: it gets its fini_thread, main gets one too. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *worker(void *arg)
{
    execl("/bin/echo", "echo", "from the thread", (char *)0);
    return arg;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    return 1;
}
