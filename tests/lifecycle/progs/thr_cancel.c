#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *blocked(void *a) { for (;;) sleep(100); return 0; }
int main(void) {
    pthread_t t; pthread_create(&t, 0, blocked, 0);
    usleep(20000);
    pthread_cancel(t);
    void *r; pthread_join(t, &r);
    printf("canceled=%d\n", r == PTHREAD_CANCELED);
    return 0;
}
