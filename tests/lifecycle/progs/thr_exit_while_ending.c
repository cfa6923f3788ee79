/* A thread ends (its start routine returns) and, while its fini_thread is
 * still running (the test's client sleeps in it, LC_FINI_THREAD_DELAY_MS),
 * main calls exit: the exit must wait for that fini_thread to finish
 * before fini_process, as for any thread it shoots down. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *ends_at_once(void *arg)
{
    return arg;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, ends_at_once, NULL);
    pthread_detach(t);
    struct timespec nap = { 0, 150 * 1000 * 1000 }; /* the thread is inside its fini_thread */
    nanosleep(&nap, NULL);
    printf("exiting\n");
    exit(0);
}
