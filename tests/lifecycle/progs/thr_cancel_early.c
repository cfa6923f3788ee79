/* Threads cancelled right after pthread_create, most before they ran a
 * single instruction of their own: each must still get init_thread and
 * fini_thread (the request acts at the start routine's first cancellation
 * point, not inside the lifecycle layer's trampoline), and the exit must
 * not wait for threads that are gone. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *blocked(void *a)
{
    for (;;)
        sleep(100);
    return a;
}
int main(void)
{
    int cancelled = 0;
    for (int i = 0; i < 200; i++) {
        pthread_t t;
        if (pthread_create(&t, 0, blocked, 0) != 0)
            return 1;
        pthread_cancel(t);
        void *r;
        pthread_join(t, &r);
        cancelled += r == PTHREAD_CANCELED;
    }
    printf("canceled=%d\n", cancelled);
    return 0;
}
