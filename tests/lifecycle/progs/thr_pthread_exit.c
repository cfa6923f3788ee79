#include <pthread.h>
#include <stdio.h>
static void inner(void) { pthread_exit((void *)42); }
static void *work(void *a) { inner(); return 0; }
int main(void) {
    pthread_t t; pthread_create(&t, 0, work, 0);
    void *r; pthread_join(t, &r);
    printf("value=%ld\n", (long)r);
    return 0;
}
