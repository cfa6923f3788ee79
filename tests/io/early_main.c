/* With early_shim.so preloaded before libhookit: the block the shim made
 * during the lookups lives in libhookit (its early arena), keeps its text
 * when realloc'ed into a real block, and frees cleanly. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char *shim_kept;

int main(void)
{
    Dl_info info;
    if (!shim_kept || !dladdr(shim_kept, &info) || !info.dli_fname) {
        printf("no early block\n");
        return 1;
    }
    const char *base = strrchr(info.dli_fname, '/');
    printf("early block in %s: %s\n", base ? base + 1 : info.dli_fname, shim_kept);
    char *moved = realloc(shim_kept, 100000);
    printf("after realloc: %s, %s\n", moved, dladdr(moved, &info) ? "still in a module" : "on the heap");
    free(moved);
    char *fresh = malloc(10);
    printf("fresh block %s\n", fresh && !dladdr(fresh, &info) ? "on the heap" : "in a module");
    free(fresh);
    return 0;
}
