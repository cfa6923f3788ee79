#include <pthread.h>
#include <stdio.h>
static void *work(void *a) { return a; }
int main(void) {
    pthread_t t[3];
    for (long i = 0; i < 3; i++) pthread_create(&t[i], 0, work, (void *)i);
    for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
    printf("done\n");
    return 0;
}
