#include <pthread.h>
#include <stdio.h>
static void *work(void *a) { long n = (long)a, s = 0; for (long i = 0; i < n * 1000; i++) s += i; return (void *)s; }
int main(void) {
    pthread_t t[4];
    for (long i = 0; i < 4; i++) pthread_create(&t[i], 0, work, (void *)(i + 1));
    long sum = 0;
    for (int i = 0; i < 4; i++) { void *r; pthread_join(t[i], &r); sum += (long)r; }
    printf("sum=%ld\n", sum);
    return 0;
}
