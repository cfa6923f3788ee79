/*
 * own_malloc: a program that brings its own instrumented malloc family and
 * uses threads, fork and dlopen (tests/core/test_exact.py).  libc calls it
 * for hookit's thread set-up (pthread_getattr_np), its names (libbfd) and
 * its files: none of that may hang, spin or show in the profile.
 *
 *   main                 work x1 (and what libc itself allocates for main)
 *   each thread: thr > work
 *   the child: main (context) > work
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "progs.h"

volatile long sink;
static char heap[64 << 20];
static size_t used;
static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;

static void *bump(size_t n)
{
    pthread_mutex_lock(&heap_lock);
    size_t at = (used + 15) & ~(size_t)15;
    if (at + n + 16 > sizeof heap) {
        pthread_mutex_unlock(&heap_lock);
        errno = ENOMEM;
        return NULL;
    }
    used = at + n + 16;
    pthread_mutex_unlock(&heap_lock);
    *(size_t *)(heap + at) = n;
    return heap + at + 16;
}

void *malloc(size_t n) { return bump(n); }
void free(void *p) { (void)p; }
void *calloc(size_t a, size_t b)
{
    void *p = bump(a * b);
    if (p)
        memset(p, 0, a * b);
    return p;
}
void *realloc(void *p, size_t n)
{
    void *q = bump(n);
    if (q && p) {
        size_t old = ((size_t *)p)[-2];
        memcpy(q, p, old < n ? old : n);
    }
    return q;
}
void *memalign(size_t align, size_t n)
{
    char *p = bump(n + align);
    return p ? (void *)(((size_t)p + align - 1) & ~(align - 1)) : NULL;
}
int posix_memalign(void **out, size_t align, size_t n)
{
    *out = memalign(align, n);
    return *out ? 0 : ENOMEM;
}
void *aligned_alloc(size_t align, size_t n) { return memalign(align, n); }

KEEP void work(void) { sink += (long)(size_t)malloc(10) != 0; }

static void *thr(void *arg)
{
    (void)arg;
    work();
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, thr, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    pid_t pid = fork();
    if (pid == 0) {
        work();
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    void *h = dlopen("libm.so.6", RTLD_NOW);
    if (h)
        dlclose(h);
    work();
    printf("own_malloc: %ld\n", (long)sink);
    return 0;
}
