/*
 * Test driver: A2N in this process across dlopen and dlclose.
 *
 *   dl LIB reopen    dlopen, look up (no explicit reload), dlclose, reload,
 *                    look up again, then dlopen again and look up
 *   dl LIB deleted   dlopen, remove LIB from disk, then look up
 *   dl LIB memfd     copy LIB into a memfd, dlopen it, look up
 *   dl LIB gone      dlopen, remove LIB, reload, dlclose, reload, look up
 *
 * Prints "LABEL\tADDR\trc\tflags\tmodule\tfunction\tsymbol_addr" per lookup.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hookit/a2n.h"

static void show(struct a2n *a, const char *label, void *p)
{
    struct a2n_result r;
    int rc = a2n_lookup(a, (uint64_t)(uintptr_t)p, 0, &r);
    printf("%s\t%p\t%d\t%d\t%s\t%s\t0x%llx\n", label, p, rc, r.flags, r.module, r.function,
           (unsigned long long)r.symbol_addr);
    fflush(stdout);
}

/* Is path still in this process's maps? */
static int mapped(const char *path)
{
    char line[4096];
    int found = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f))
        found |= strstr(line, path) != NULL;
    if (f)
        fclose(f);
    return found;
}

static void *must_dlopen(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        exit(1);
    }
    return h;
}

static void *sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
        exit(1);
    }
    return p;
}

static void *static_of(void *h)
{
    void *(*get)(void) = (void *(*)(void))sym(h, "lib_static_address");
    return get();
}

static int reopen(struct a2n *a, const char *lib)
{
    void *h = must_dlopen(lib);
    void *exported = sym(h, "lib_exported"), *stat = static_of(h);
    show(a, "open.exported", exported);         /* no reload: the lookup reloads */
    show(a, "open.static", stat);
    dlclose(h);
    if (a2n_reload(a) != 0)
        return 1;
    printf("closed.mapped\t%d\n", mapped(lib));
    show(a, "closed.exported", exported);
    show(a, "closed.static", stat);
    h = must_dlopen(lib);
    a2n_reload(a);
    show(a, "again.exported", sym(h, "lib_exported"));
    return 0;
}

static int deleted(struct a2n *a, const char *lib)
{
    void *h = must_dlopen(lib);
    unlink(lib);
    a2n_reload(a);
    show(a, "deleted.exported", sym(h, "lib_exported"));
    show(a, "deleted.static", static_of(h));
    return 0;
}

static int gone(struct a2n *a, const char *lib)
{
    void *h = must_dlopen(lib);
    void *exported = sym(h, "lib_exported"), *stat = static_of(h);
    unlink(lib);
    a2n_reload(a);
    dlclose(h);
    a2n_reload(a);
    printf("gone.mapped\t%d\n", mapped(lib));
    show(a, "gone.exported", exported);
    show(a, "gone.static", stat);
    return 0;
}

static int memfd(struct a2n *a, const char *lib)
{
    int in = open(lib, O_RDONLY), fd = memfd_create("a2n test lib", 0);
    struct stat st;
    if (in < 0 || fd < 0 || fstat(in, &st) != 0)
        return 1;
    char *buf = malloc((size_t)st.st_size);
    if (read(in, buf, (size_t)st.st_size) != st.st_size
        || write(fd, buf, (size_t)st.st_size) != st.st_size)
        return 1;
    free(buf);
    close(in);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    void *h = must_dlopen(path);
    show(a, "memfd.exported", sym(h, "lib_exported"));
    show(a, "memfd.static", static_of(h));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    struct a2n *a = a2n_open(0);
    if (!a)
        return 1;
    int rc = 2;
    if (strcmp(argv[2], "reopen") == 0)
        rc = reopen(a, argv[1]);
    else if (strcmp(argv[2], "deleted") == 0)
        rc = deleted(a, argv[1]);
    else if (strcmp(argv[2], "gone") == 0)
        rc = gone(a, argv[1]);
    else if (strcmp(argv[2], "memfd") == 0)
        rc = memfd(a, argv[1]);
    a2n_close(a);
    return rc;
}
