/* tests/io/test_wait_internal.py: threads that never block but make hookit
 * work inside their calls: makecontext (libjprof's context table, under its
 * lock) and dlopen (libhookit's scan of the new module, under its lock). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

static void coroutine(void) {}

__attribute__((noinline)) void make_many(int n)
{
    static __thread char stack[16384];
    ucontext_t uc;
    for (int i = 0; i < n; i++) {
        getcontext(&uc);
        uc.uc_stack.ss_sp = stack;
        uc.uc_stack.ss_size = sizeof stack;
        uc.uc_link = NULL;
        makecontext(&uc, coroutine, 0);
    }
}

__attribute__((noinline)) void open_many(int n, const char *lib)
{
    for (int i = 0; i < n; i++) {
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "%s\n", dlerror());
            exit(1);
        }
        dlclose(h);
    }
}

static const char *lib;
static int rounds;

static void *worker(void *arg)
{
    (void)arg;
    make_many(rounds * 50);
    if (lib)
        open_many(rounds, lib);
    return NULL;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atoi(argv[1]) : 2000;
    lib = argc > 2 ? argv[2] : NULL;
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("done\n");
    return 0;
}
