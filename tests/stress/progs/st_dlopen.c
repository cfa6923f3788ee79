/* Stress: 2 threads dlopen, call into and dlclose NLIBS instrumented
 * libraries (DIR/libstN.so) in a loop for SECONDS.  stderr: the number of
 * cycles (each calls lib_fn once).   st_dlopen DIR NLIBS SECONDS */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *dir;
static int nlibs;
static double secs;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *loop(void *arg)
{
    long cycles = 0, bad = 0;
    char path[4096];
    double end = now() + secs;
    for (int i = (int)(long)arg; now() < end; i++) {
        snprintf(path, sizeof path, "%s/libst%d.so", dir, i % nlibs);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            exit(2);
        }
        long (*fn)(long) = (long (*)(long))dlsym(h, "lib_fn");
        if (!fn || fn(1) != 2 * (1 + i % nlibs))
            bad++;
        dlclose(h);
        cycles++;
    }
    return (void *)(bad ? -1 : cycles);
}

int main(int argc, char **argv)
{
    dir = argv[1];
    nlibs = atoi(argv[2]);
    secs = atof(argv[3]);
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, loop, (void *)(i * 7));
    long total = 0, bad = 0;
    for (int i = 0; i < 2; i++) {
        void *r;
        pthread_join(t[i], &r);
        if ((long)r < 0)
            bad = 1;
        else
            total += (long)r;
    }
    printf("dlopen %s\n", bad ? "wrong results" : "ok");
    fprintf(stderr, "cycles %ld\n", total);
    return bad;
}
