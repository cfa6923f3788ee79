/*
 * dlclose_wait: a libmonitor callback that waits for another thread's
 * dlopen while a dlclose is still being finished (tests/core/test_shlib.py).
 *
 * monitor_post_dlclose (include/monitor.h) runs after the real dlclose and
 * before the profiler's own post-dlclose step, that is while jprof holds
 * the lock that keeps unloads and later dlopens apart.  Here it starts a
 * thread that dlopens and dlcloses libshlib.so, and joins it: that thread
 * waits for the lock, which its joiner holds.  jprof must give up waiting
 * after a bounded time rather than hang the program.
 *
 *   dlclose_wait LIB ROUNDS     prints "rounds N"
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "progs.h"

volatile long sink;
static const char *lib_path;
static int in_callback;         /* the worker's own dlclose comes here too */

KEEP static void *open_and_close(void *arg)
{
    void *h = dlopen(lib_path, RTLD_NOW);
    if (!h)
        return NULL;
    dlclose(h);
    return arg;
}

void monitor_post_dlclose(void *handle, int ret)
{
    (void)handle;
    (void)ret;
    if (in_callback)
        return;
    in_callback = 1;
    pthread_t worker;
    void *ok = NULL;
    if (pthread_create(&worker, NULL, open_and_close, (void *)1) == 0)
        pthread_join(worker, &ok);
    if (!ok)
        printf("worker failed\n");
    in_callback = 0;
}

int main(int argc, char **argv)
{
    lib_path = argv[1];
    int rounds = atoi(argv[2]), done = 0;
    for (int i = 0; i < rounds; i++) {
        void *h = dlopen(lib_path, RTLD_NOW);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 9;
        }
        dlclose(h);
        done++;
    }
    printf("rounds %d\n", done);
    return 0;
}
