/* Thread creation seen by an hpcrun-shaped client: start routines and the
 * creating function through monitor_get_new_thread_info, per-thread stack
 * bottoms, monitor_disable_new_threads acting on the calling thread only,
 * MONITOR_IGNORE_NEW_THREAD (ignored_worker) covering the ignored thread's
 * own children.  Built with -rdynamic so the client can name functions. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static pthread_barrier_t both;
static void (*disable)(void), (*enable)(void);

void *leaf_worker(void *arg) { return arg; }

void *nested_worker(void *arg)
{
    pthread_t t;
    pthread_create(&t, NULL, leaf_worker, NULL);
    pthread_join(t, NULL);
    return arg;
}

/* Ignored by the client (HPC_IGNORE=ignored_worker): its child too. */
void *ignored_worker(void *arg)
{
    pthread_t t;
    pthread_create(&t, NULL, leaf_worker, NULL);
    pthread_join(t, NULL);
    return arg;
}

/* Creates with new threads disabled (only for itself), while main creates
 * one at the same time. */
void *disabling_worker(void *arg)
{
    pthread_t t;
    if (disable)
        disable();
    pthread_create(&t, NULL, nested_worker, NULL);
    pthread_join(t, NULL);
    pthread_barrier_wait(&both);        /* main creates its thread now */
    pthread_barrier_wait(&both);
    if (enable)
        enable();
    pthread_create(&t, NULL, leaf_worker, NULL);
    pthread_join(t, NULL);
    return arg;
}

__attribute__((noinline)) pthread_t spawn(void *(*fn)(void *))
{
    pthread_t t;
    pthread_create(&t, NULL, fn, NULL);
    return t;
}

int main(void)
{
    disable = (void (*)(void))dlsym(RTLD_DEFAULT, "monitor_disable_new_threads");
    enable = (void (*)(void))dlsym(RTLD_DEFAULT, "monitor_enable_new_threads");
    pthread_barrier_init(&both, NULL, 2);
    pthread_t a = spawn(disabling_worker);
    pthread_barrier_wait(&both);
    pthread_t b = spawn(leaf_worker);
    pthread_join(b, NULL);
    pthread_barrier_wait(&both);
    pthread_join(a, NULL);
    pthread_t i = spawn(ignored_worker);
    pthread_join(i, NULL);
    pthread_t c = spawn(leaf_worker);
    pthread_join(c, NULL);
    printf("threads done\n");
    return 0;
}
