/* A dlsym that allocates (as some C libraries' dlsym does): preloaded
 * before libhookit, it makes every real-function lookup call malloc,
 * calloc, realloc and free while libhookit's real malloc is not known yet,
 * so those blocks must come from libhookit's early arena.  The first block
 * it makes is kept (shim_kept) for the program to inspect and free later.
 * Built with clang for musttail: the real dlsym must see libhookit as its
 * caller, or RTLD_NEXT would search from here. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

char *shim_kept;
static void *(*real_dlsym)(void *, const char *);

void *dlsym(void *handle, const char *name)
{
    if (!real_dlsym)
        real_dlsym = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    char *p = malloc(32);
    if (p)
        strcpy(p, "early block");
    char *q = calloc(4, 8);
    if (q && q[31] != 0)
        abort();
    p = realloc(p, 64);
    free(q);
    if (!shim_kept)
        shim_kept = p;
    else
        free(p);
    __attribute__((musttail)) return real_dlsym(handle, name);
}
