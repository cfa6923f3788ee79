/* A threaded program whose exec cannot succeed (ENOENT): the other threads
 * run on unharmed, monitored to their normal end. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_barrier_t started, resume;

static void *worker(void *arg)
{
    pthread_barrier_wait(&started);
    pthread_barrier_wait(&resume);
    return arg;
}

int main(void)
{
    pthread_t t[3];
    pthread_barrier_init(&started, NULL, 4);
    pthread_barrier_init(&resume, NULL, 4);
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    pthread_barrier_wait(&started);
    char *args[] = { "nothing", NULL };
    execv("/nonexistent/program", args);
    printf("execv: %s\n", strerror(errno));
    execvp("no-such-program-on-path", args);
    printf("execvp: %s\n", strerror(errno));
    pthread_barrier_wait(&resume);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("joined\n");
    return 0;
}
