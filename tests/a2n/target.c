/*
 * Test program for A2N: prints "NAME ADDRESS" for functions of its own
 * (static and exported), of its shared library (with -DWITH_LIB) and of
 * libc, then "ready", then waits for stdin to close so another process can
 * resolve those addresses while it runs.
 *
 * A2N_MAP_FILE=PATH  also maps that file and prints "mapped_file ADDRESS"
 * A2N_MANY_MAPS=N    also makes N small mappings (a huge maps file)
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef WITH_LIB
void lib_report(void);
#endif

static int __attribute__((noinline)) static_helper(int x) { return x * 3 + 1; }

int __attribute__((noinline)) exported_fn(int x)
{
    return static_helper(x) + 2;
}

static int __attribute__((noinline)) static_second(int x)
{
    return exported_fn(x) * 5;
}

static void map_file(const char *path)
{
    int fd = open(path, O_RDONLY);
    void *p = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED)
        printf("mapped_file %p\n", (void *)((char *)p + 0x10));
    if (fd >= 0)
        close(fd);
}

/* Neighbouring mappings with different protections stay separate lines. */
static void many_maps(long n)
{
    char *p = mmap(NULL, (size_t)n * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    for (long i = 0; i < n; i += 2)
        mprotect(p + i * 4096, 4096, PROT_READ | PROT_WRITE);
}

int main(int argc, char **argv)
{
    if (getenv("A2N_MAP_FILE"))
        map_file(getenv("A2N_MAP_FILE"));
    if (getenv("A2N_MANY_MAPS"))
        many_maps(atol(getenv("A2N_MANY_MAPS")));
    printf("static_helper %p\n", (void *)static_helper);
    printf("static_second %p\n", (void *)static_second);
    printf("exported_fn %p\n", (void *)exported_fn);
    printf("exported_fn+1 %p\n", (void *)((char *)exported_fn + 1));
    printf("main %p\n", (void *)main);
    printf("getpid %p\n", dlsym(RTLD_DEFAULT, "getpid"));
    void *anon = mmap(NULL, 65536, PROT_READ | PROT_WRITE | PROT_EXEC,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("anon %p\n", (void *)((char *)anon + 0x10));
#ifdef WITH_LIB
    lib_report();
#endif
    printf("ready %d\n", static_second(argc));
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "wait") == 0)
        while (getchar() != EOF)
            ;
    return 0;
}
