/*
 * dlopen_main: loads libshlib.so (shlib.c) at run time, calls into it and
 * unloads it before exit (tests/core/test_shlib.py).  The library's
 * functions must keep their names although it is gone when the profile is
 * written.
 *
 *   main
 *     shlib_entry(5, back_in_main)   [libshlib.so]
 *       shlib_hidden x5              [libshlib.so]
 *         shlib_leaf x2 each         [libshlib.so]
 *       back_in_main x1              [dlopen_main]
 *     after_unload x1                [dlopen_main]
 */
#include <dlfcn.h>
#include <stdio.h>
#include "progs.h"

volatile long sink;

KEEP int back_in_main(int x) { return x * 2; }
KEEP void after_unload(void) { sink++; }

int main(int argc, char **argv)
{
    void *lib = dlopen(argc > 1 ? argv[1] : "libshlib.so", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 9;
    }
    int (*entry)(int, int (*)(int)) = (int (*)(int, int (*)(int)))dlsym(lib, "shlib_entry");
    int r = entry(5, back_in_main);
    if (dlclose(lib) != 0)
        return 8;
    after_unload();
    printf("dlopen: %d\n", r);
    return 0;
}
