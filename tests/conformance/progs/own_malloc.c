/*
 * own_malloc: the program brings its own instrumented malloc family (a bump
 * allocator; free keeps a count), and uses threads, fork and dlopen (argv[1]:
 * the instrumented plug-in library).  libc's own allocations (stdio, thread
 * set-up, dlopen) land in these functions too.  The issue saw a hang at the
 * first pthread_create and a spinning fork child: every run has a timeout.
 * Reference: refstack.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define ARENA (512ul << 20)

static char *arena;
static size_t used;
static volatile long frees;

static void *bump(size_t size, size_t align)
{
    if (!arena) {
        void *m = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        char *expect = NULL;
        if (!__atomic_compare_exchange_n(&arena, &expect, (char *)m, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            munmap(m, ARENA);
    }
    if (align < 16)
        align = 16;
    size_t need = (size + 16 + align - 1) & ~(align - 1);
    for (;;) {
        size_t old = __atomic_load_n(&used, __ATOMIC_ACQUIRE);
        size_t start = ((old + 16 + align - 1) & ~(align - 1));
        size_t end = start + need;
        if (end > ARENA) {
            errno = ENOMEM;
            return NULL;
        }
        if (__atomic_compare_exchange_n(&used, &old, end, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            *(size_t *)(arena + start - 16) = size;
            return arena + start;
        }
    }
}

void *malloc(size_t size) { return bump(size, 16); }
void free(void *p) { if (p) __atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED); }
void *calloc(size_t n, size_t size)
{
    void *p = bump(n * size, 16);
    if (p)
        memset(p, 0, n * size);
    return p;
}
size_t malloc_usable_size(void *p) { return p ? *(size_t *)((char *)p - 16) : 0; }
void *realloc(void *p, size_t size)
{
    void *q = bump(size, 16);
    if (p && q) {
        size_t old = malloc_usable_size(p);
        memcpy(q, p, old < size ? old : size);
        free(p);
    }
    return q;
}
void *memalign(size_t align, size_t size) { return bump(size, align); }
void *aligned_alloc(size_t align, size_t size) { return bump(size, align); }
int posix_memalign(void **out, size_t align, size_t size)
{
    void *p = bump(size, align);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}
void *valloc(size_t size) { return bump(size, 4096); }
void *pvalloc(size_t size) { return bump((size + 4095) & ~4095ul, 4096); }

/* Added to by both threads: atomically, or a lost update changes what the
 * program prints (the conformance run compares it with the run without
 * hookit, where the threads overlap less). */
static long sink;

static void use_memory(int n)
{
    for (int i = 0; i < n; i++) {
        char *p = malloc(64 + i);
        p[0] = (char)i;
        __atomic_add_fetch(&sink, p[0], __ATOMIC_RELAXED);
        p = realloc(p, 128 + i);
        free(p);
    }
}

static void *thread_main(void *arg) { use_memory(10); return NULL; }

static void run_threads(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, thread_main, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
}

static void run_fork(void)
{
    pid_t p = fork();
    if (p == 0) {
        use_memory(5);
        _exit(0);
    }
    waitpid(p, NULL, 0);
}

static int run_plugin(const char *path)
{
    void *h = dlopen(path, RTLD_NOW);
    if (!h)
        return -1;
    int (*fn)(int) = (int (*)(int))dlsym(h, "plug_work");
    return fn ? fn(4) : -1;
}

int main(int argc, char **argv)
{
    use_memory(10);
    run_threads();
    run_fork();
    int r = run_plugin(argc > 1 ? argv[1] : "./libplug.so");
    printf("own_malloc: %ld %d\n", __atomic_load_n(&sink, __ATOMIC_RELAXED), r);
    return 0;
}
