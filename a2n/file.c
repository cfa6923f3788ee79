/*
 * An object file on disk, with no process: its functions looked up by
 * name.  A profile keeps each function's name and run-time address but not
 * where its module was loaded, so `hookit export` and `report --lines` find
 * a function in the binary by the name A2N gave it at the end of the run,
 * and read file:line there.  Nothing of this runs in the profiled process.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "a2n/a2n_internal.h"

struct a2n_file {
    struct a2n_object object;
    struct a2n_strings strings;
    size_t *by_name;            /* indices into object.syms, sorted by display name */
    size_t nnames;
};

A2N_API struct a2n_file *a2n_file_open(const char *path)
{
    struct a2n_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->object.path = strdup(path);
    f->object.open_path = f->object.path;
    if (!f->object.path) {
        free(f);
        return NULL;
    }
    a2n_symbols_find(&f->object, 0);            /* loads the symbol table */
    if (f->object.sym_state != 1) {
        a2n_file_close(f);
        errno = ENOEXEC;
        return NULL;
    }
    return f;
}

A2N_API void a2n_file_close(struct a2n_file *f)
{
    if (!f)
        return;
    a2n_symbols_free(&f->object);
    a2n_strings_free(&f->strings);
    free(f->object.path);
    free(f->by_name);
    free(f);
}

static int by_display_name(const void *x, const void *y, void *ctx)
{
    const struct a2n_file *f = ctx;
    const struct a2n_symbol *a = &f->object.syms[*(const size_t *)x];
    const struct a2n_symbol *b = &f->object.syms[*(const size_t *)y];
    int c = strcmp(a->name, b->name);
    return c ? c : (a->addr < b->addr ? -1 : a->addr > b->addr);
}

/* Every symbol's display name is worked out (demangled) once, on the first
 * search. */
static int index_names(struct a2n_file *f)
{
    size_t n = f->object.nsyms;
    f->by_name = malloc((n ? n : 1) * sizeof *f->by_name);
    if (!f->by_name)
        return -1;
    for (size_t i = 0; i < n; i++) {
        struct a2n_symbol *s = &f->object.syms[i];
        const char *name = a2n_symbol_name(&f->strings, s);
        if (!s->name)           /* out of memory for the demangled copy */
            s->name = name;
        f->by_name[i] = i;
    }
    qsort_r(f->by_name, n, sizeof *f->by_name, by_display_name, f);
    f->nnames = n;
    return 0;
}

A2N_API size_t a2n_file_find(struct a2n_file *f, const char *name, uint64_t *addrs, size_t max)
{
    if (!f || !name || (!f->by_name && index_names(f) < 0))
        return 0;
    size_t lo = 0, hi = f->nnames;              /* the first name >= name */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(f->object.syms[f->by_name[mid]].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t count = 0;
    for (size_t i = lo; i < f->nnames && !strcmp(f->object.syms[f->by_name[i]].name, name); i++) {
        if (count < max)
            addrs[count] = f->object.syms[f->by_name[i]].addr;
        count++;
    }
    return count;
}

A2N_API int a2n_file_line(struct a2n_file *f, uint64_t vaddr, const char **file, unsigned *line)
{
    if (!f) {
        *file = NULL;
        *line = 0;
        return -1;
    }
    return a2n_symbols_line(&f->object, vaddr, file, line);
}
