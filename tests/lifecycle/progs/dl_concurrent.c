/* Two threads dlopen/dlclose at the same time. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
static const char *path;
static void *loop(void *a) {
    long ok = 0;
    for (int i = 0; i < 200; i++) { void *h = dlopen(path, RTLD_NOW); if (h) { ok++; dlclose(h); } }
    return (void *)ok;
}
int main(int argc, char **argv) {
    path = argv[1];
    pthread_t a, b; pthread_create(&a, 0, loop, 0); pthread_create(&b, 0, loop, 0);
    void *ra, *rb; pthread_join(a, &ra); pthread_join(b, &rb);
    printf("opened %ld\n", (long)ra + (long)rb);
    return 0;
}
