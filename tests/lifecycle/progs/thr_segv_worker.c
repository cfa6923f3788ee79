/* A worker dies by SIGSEGV while another thread sleeps. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
volatile int *p;
static void *sleeper(void *a) { for (;;) sleep(100); }
static void *crasher(void *a) { usleep(30000); return (void *)(long)*p; }
int main(void) {
    pthread_t a, b; pthread_create(&a, 0, sleeper, 0); pthread_create(&b, 0, crasher, 0);
    printf("started\n"); fflush(stdout);
    pthread_join(b, 0);
    return 0;
}
