/*
 * Test program for A2N: prints "NAME ADDRESS" for functions of its own
 * (static and exported), of its shared library (with -DWITH_LIB) and of
 * libc, then "ready", then waits for stdin to close so another process can
 * resolve those addresses while it runs.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#ifdef WITH_LIB
void lib_report(void);
#endif

static int __attribute__((noinline)) static_helper(int x) { return x * 3 + 1; } /* LINE:static_helper */

int __attribute__((noinline)) exported_fn(int x) /* LINE:exported_fn */
{
    return static_helper(x) + 2;
}

static int __attribute__((noinline)) static_second(int x)
{
    return exported_fn(x) * 5;
}

int main(int argc, char **argv)
{
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
