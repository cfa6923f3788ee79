/*
 * The A2N entry points: open a process, look up addresses, reload.
 * Every address gets a name; see a2n.h for the fallback names.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "a2n/a2n_internal.h"

/* An address outside every mapping makes us re-read the maps once; when
 * that re-read found nothing new, more such addresses in a burst (a
 * profiler resolving garbage, say) do not re-read for this long. */
#define AUTO_RELOAD_QUIET_NS 2000000ull

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

A2N_API struct a2n *a2n_open(pid_t pid)
{
    if (pid < 0) {
        errno = EINVAL;
        return NULL;
    }
    struct a2n *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->pid = pid;
    if (a2n_modules_load(a) < 0) {
        int saved = errno;
        a2n_close(a);
        errno = saved;
        return NULL;
    }
    return a;
}

/* A process that is gone, from a copy of its maps: pid -1 makes every
 * later re-read fail harmlessly instead of reading another process. */
A2N_API struct a2n *a2n_open_maps(const char *maps_path)
{
    struct a2n *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->pid = -1;
    a2n_maps_override(maps_path);
    int rc = a2n_modules_load(a);
    a2n_maps_override(NULL);
    if (rc < 0) {
        int saved = errno;
        a2n_close(a);
        errno = saved;
        return NULL;
    }
    return a;
}

A2N_API void a2n_close(struct a2n *a)
{
    if (!a)
        return;
    a2n_modules_free(a);
    a2n_perfmap_free(a);
    a2n_strings_free(&a->strings);
    free(a);
}

A2N_API int a2n_reload(struct a2n *a)
{
    if (!a) {
        errno = EINVAL;
        return -1;
    }
    return a2n_modules_load(a) < 0 ? -1 : 0;
}

static int auto_reload(struct a2n *a)
{
    uint64_t now = now_ns();
    if (a->last_auto_reload_useless && now - a->last_auto_reload_ns < AUTO_RELOAD_QUIET_NS)
        return 0;
    int changed = a2n_modules_load(a);
    a->last_auto_reload_ns = now;
    a->last_auto_reload_useless = changed <= 0;
    return changed > 0;
}

/* The module holding addr: mapped now, else mapped once; NULL for none.
 * *anon is set to the label of an anonymous mapping holding addr. */
static struct a2n_module *locate(struct a2n *a, uint64_t addr, const char **anon)
{
    *anon = NULL;
    struct a2n_range *r = a2n_range_find(a, addr);
    if (r && r->kind == A2N_RANGE_FILE)
        return r->module;
    struct a2n_module *old = a2n_unmapped_find(a, addr);
    if (old)
        return old;
    if (r)
        *anon = r->label;
    return NULL;
}

static int fill_fallback(struct a2n *a, uint64_t addr, const char *anon, struct a2n_result *out)
{
    if (anon && a2n_perfmap_lookup(a, addr, out) == 0)
        return 0;               /* JIT-compiled code, named by its runtime */
    if (anon) {
        out->module = "[anon]";
        out->module_path = anon;
        out->function = a2n_internf(&a->strings, "[anon]+0x%llx", (unsigned long long)addr);
        struct a2n_range *r = a2n_range_find(a, addr);
        out->module_offset = r ? addr - r->start : addr;
    } else {
        out->module = "[unknown]";
        out->module_path = "[unknown]";
        out->function = a2n_internf(&a->strings, "0x%llx", (unsigned long long)addr);
        out->module_offset = addr;
    }
    if (!out->function)
        out->function = anon ? "[anon]" : "[unknown]";   /* out of memory */
    return -1;
}

static int lookup(struct a2n *a, uint64_t addr, int want_lines, struct a2n_result *out);

/* Called inside the profiled process: its errno is left as it was. */
A2N_API int a2n_lookup(struct a2n *a, uint64_t addr, int want_lines, struct a2n_result *out)
{
    int saved = errno;
    int rc = lookup(a, addr, want_lines, out);
    errno = saved;
    return rc;
}

static int lookup(struct a2n *a, uint64_t addr, int want_lines, struct a2n_result *out)
{
    if (!out)
        return -1;
    memset(out, 0, sizeof *out);
    if (!a) {
        out->module = out->module_path = "[unknown]";
        out->function = "[unknown]";
        return -1;
    }
    const char *anon;
    struct a2n_module *mod = locate(a, addr, &anon);
    if (!mod && !anon && auto_reload(a))
        mod = locate(a, addr, &anon);
    if (!mod)
        return fill_fallback(a, addr, anon, out);

    uint64_t vaddr = addr - mod->bias;
    out->flags = A2N_FOUND_MODULE;
    out->module = mod->name;
    out->module_path = mod->path;
    out->module_offset = vaddr;
    struct a2n_symbol *sym = a2n_symbols_find(mod->object, vaddr);
    if (sym) {
        out->flags |= A2N_FOUND_SYMBOL;
        out->function = a2n_symbol_name(&a->strings, sym);
        out->symbol_addr = sym->addr + mod->bias;
    } else {
        out->function = a2n_internf(&a->strings, "%s+0x%llx", mod->name,
                                    (unsigned long long)vaddr);
        if (!out->function)
            out->function = mod->name;
    }
    if (want_lines && a2n_symbols_line(mod->object, vaddr, &out->file, &out->line) == 0)
        out->flags |= A2N_FOUND_LINE;
    return sym ? 0 : -1;
}

A2N_API int a2n_module_names(struct a2n *a, uint64_t addr, const char *symbol)
{
    int saved = errno;
    const char *anon;
    struct a2n_module *mod = a && symbol ? locate(a, addr, &anon) : NULL;
    int rc = mod ? a2n_symbols_names(mod->object, symbol) : -1;
    errno = saved;
    return rc;
}
