/*
 * dlclose_deps: a dlclose that unloads a library's dependency too
 * (tests/core/test_shlib.py).
 *
 *   main
 *     outer_fn x1      [libdep_outer.so]
 *       inner_fn x1    [libdep_inner.so, loaded only as libdep_outer's need]
 *     other_fn x1 per library in LIBS   [libdep_other*.so]
 *
 * libdep_outer.so is closed, which unloads libdep_inner.so with it; then
 * the other libraries are loaded and called, and stay loaded: one of them
 * usually lands where libdep_inner.so was, so naming inner_fn's node by
 * its address at the end would give it another library's function.
 *
 *   dlclose_deps OUTER INNER OTHER...
 * prints "inner gone: yes|no" and "reused: yes|no" (an other library
 * mapped over inner_fn's old address).
 */
#define _GNU_SOURCE             /* dladdr */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "progs.h"

volatile long sink;

int main(int argc, char **argv)
{
    void *outer = dlopen(argv[1], RTLD_NOW);
    if (!outer) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 9;
    }
    long (*outer_fn)(long) = (long (*)(long))dlsym(outer, "outer_fn");
    void *inner_at = dlsym(outer, "inner_fn");
    sink += outer_fn(1);
    dlclose(outer);
    int gone = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD) == NULL;
    int reused = 0;
    for (int i = 3; i < argc; i++) {
        void *other = dlopen(argv[i], RTLD_NOW);
        if (!other) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 9;
        }
        long (*other_fn)(long) = (long (*)(long))dlsym(other, "other_fn");
        sink += other_fn(2);
        Dl_info info;
        if (dladdr(inner_at, &info) && info.dli_fname && !strcmp(info.dli_fname, argv[i]))
            reused = 1;
    }
    printf("inner gone: %s\nreused: %s\n", gone ? "yes" : "no", reused ? "yes" : "no");
    return 0;
}
