#include <pthread.h>
#include <stdio.h>
static void *work(void *a) { return a; }
int main(void) {
    long sum = 0;
    for (int round = 0; round < 20; round++) {
        pthread_t t[50];
        for (long i = 0; i < 50; i++) pthread_create(&t[i], 0, work, (void *)i);
        for (int i = 0; i < 50; i++) { void *r; pthread_join(t[i], &r); sum += (long)r; }
    }
    printf("threads=1000 sum=%ld\n", sum);
    return 0;
}
