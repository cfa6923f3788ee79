/*
 * This process without /proc (a chroot, a sandbox): the dynamic loader's
 * own list of loaded objects (dl_iterate_phdr) stands in for the maps.
 * Every PT_LOAD segment becomes one mapping line, as the loader mapped it;
 * anonymous memory is then unknown, and modules have their exact bias.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "a2n/a2n_internal.h"

struct walk {
    int (*fn)(void *ctx, const struct a2n_map *m);
    void *ctx;
    struct a2n_map *map;
    uint64_t page;
    int rc;
};

/* dlpi_name is "" for the program itself: AT_EXECFN names it, relative to
 * the directory it was started from, which is the best we have. */
static void object_path(const struct dl_phdr_info *info, char *path, size_t size)
{
    const char *name = info->dlpi_name;
    if (!name || !*name) {
        const char *execfn = (const char *)getauxval(AT_EXECFN);
        char *real = execfn ? realpath(execfn, NULL) : NULL;
        snprintf(path, size, "%s", real ? real : execfn ? execfn : "[exe]");
        free(real);
        return;
    }
    char *real = realpath(name, NULL);    /* dlopen("./libx.so") */
    snprintf(path, size, "%s", real ? real : name);
    free(real);
}

static int is_vdso(const struct dl_phdr_info *info, uint64_t page)
{
    uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
    for (int i = 0; vdso && i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD)
            return ((info->dlpi_addr + ph->p_vaddr) & ~(page - 1)) == vdso;
    }
    return 0;
}

static int on_object(struct dl_phdr_info *info, size_t size, void *data)
{
    struct walk *w = data;
    struct a2n_map *m = w->map;
    (void)size;
    memset(m, 0, sizeof *m);
    if (is_vdso(info, w->page)) {
        strcpy(m->path, "[vdso]");
    } else {
        object_path(info, m->path, sizeof m->path);
        struct stat st;
        if (stat(m->path, &st) == 0)
            m->inode = (uint64_t)st.st_ino;
    }
    uint64_t prev_end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || ph->p_memsz == 0)
            continue;
        uint64_t first = info->dlpi_addr + ph->p_vaddr;
        uint64_t start = first & ~(w->page - 1);
        uint64_t end = (first + ph->p_memsz + w->page - 1) & ~(w->page - 1);
        uint64_t offset = ph->p_offset & ~(w->page - 1);
        if (start < prev_end) {         /* two segments share a page: one line */
            offset += prev_end - start;
            start = prev_end;
        }
        if (start >= end)
            continue;
        m->start = start;
        m->end = prev_end = end;
        m->file_offset = offset;
        m->perms[0] = ph->p_flags & PF_R ? 'r' : '-';
        m->perms[1] = ph->p_flags & PF_W ? 'w' : '-';
        m->perms[2] = ph->p_flags & PF_X ? 'x' : '-';
        m->perms[3] = 'p';
        if ((w->rc = w->fn(w->ctx, m)) != 0)
            return 1;
    }
    return 0;
}

int a2n_read_loaded_objects(int (*fn)(void *ctx, const struct a2n_map *m), void *ctx)
{
    long page = sysconf(_SC_PAGESIZE);
    struct walk w = { fn, ctx, malloc(sizeof(struct a2n_map)), page > 0 ? (uint64_t)page : 4096, 0 };
    if (!w.map)
        return -1;
    dl_iterate_phdr(on_object, &w);
    free(w.map);
    return w.rc;
}
