/* Names for the function table, through A2N.  The A2N view of the process
 * is opened at start and re-read on dlopen/dlclose.
 *
 * A library that is closed before the end: its functions are named while
 * it is still mapped (pre-dlclose), and once it is really gone (dlclose
 * may only drop a reference) the tree nodes of its functions become named
 * synthetic frames, so a library mapped later at the same address cannot
 * lend them its names. */
#include "jprof.h"
#include "profile/profile.h"
#include <hookit/a2n.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct a2n *a2n;
static pthread_mutex_t a2n_lock = PTHREAD_MUTEX_INITIALIZER;

JP_NOINSTR void jp_names_start(void)
{
    a2n = a2n_open(0);
}

JP_NOINSTR void jp_names_reload(void)
{
    pthread_mutex_lock(&a2n_lock);
    if (a2n)
        a2n_reload(a2n);
    pthread_mutex_unlock(&a2n_lock);
}

/* ---- libraries closed while the program runs ---------------------------- */
struct closing {
    char name[4096];            /* the library's path as the loader knows it */
    uintptr_t bias;
    uintptr_t lo[8], hi[8];     /* its executable segments */
    unsigned nranges;
    arena_ref *nodes;           /* tree nodes of its functions ... */
    uint64_t *keys;             /* ... and the synthetic keys they become */
    size_t count, cap;
};
/* Per thread: two threads may be closing libraries at once, each between
 * its own pre- and post-dlclose.  The state is allocated; only a pointer is
 * thread-local (a plugin's static TLS must stay small). */
static __thread struct closing *closing_self __attribute__((tls_model("initial-exec")));

JP_NOINSTR static int find_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct closing *c = arg;
    (void)size;
    if (info->dlpi_addr != c->bias || strcmp(info->dlpi_name, c->name) != 0)
        return 0;
    for (int i = 0; i < info->dlpi_phnum && c->nranges < 8; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            c->lo[c->nranges] = info->dlpi_addr + ph->p_vaddr;
            c->hi[c->nranges++] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        }
    }
    return 1;
}

JP_NOINSTR static int in_closing(uint64_t fn)
{
    for (unsigned i = 0; i < closing_self->nranges; i++)
        if (fn >= closing_self->lo[i] && fn < closing_self->hi[i])
            return 1;
    return 0;
}

JP_NOINSTR static void remember(arena_ref ref, uint64_t key)
{
    if (closing_self->count == closing_self->cap) {
        size_t cap = closing_self->cap ? closing_self->cap * 2 : 64;
        arena_ref *n = realloc(closing_self->nodes, cap * sizeof *n);
        if (n)
            closing_self->nodes = n;
        uint64_t *k = realloc(closing_self->keys, cap * sizeof *k);
        if (k)
            closing_self->keys = k;
        if (!n || !k)
            return;
        closing_self->cap = cap;
    }
    closing_self->nodes[closing_self->count] = ref;
    closing_self->keys[closing_self->count++] = key;
}

/* The synthetic key naming fn, a function of the closing library. */
JP_NOINSTR static uint64_t key_for(uint64_t fn)
{
    struct a2n_result r;
    a2n_lookup(a2n, fn, 0, &r);
    return jp_synthetic_key(r.function ? r.function : "?", r.module ? r.module : "");
}

/* Every node of every thread whose function is in the closing library. */
JP_NOINSTR static void collect_nodes(void)
{
    for (arena_ref t = jp_arena_header()->first_thread; t; t = ((struct arena_thread *)jp_at(t))->next) {
        arena_ref root = ((struct arena_thread *)jp_at(t))->root;
        arena_ref r = root ? jp_node(root)->first_child : 0;
        while (r) {
            struct arena_node *n = jp_node(r);
            if (!jp_is_synthetic(n->fn) && in_closing(n->fn)) {
                uint64_t key = key_for(n->fn);
                if (key)
                    remember(r, key);
            }
            if (n->first_child) {
                r = n->first_child;
                continue;
            }
            while (r != root && !jp_node(r)->next_sibling)
                r = jp_node(r)->parent;
            r = r != root ? jp_node(r)->next_sibling : 0;
        }
    }
}

JP_NOINSTR void jp_names_pre_dlclose(void *handle)
{
    struct link_map *lm = NULL;
    if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name || !*lm->l_name)
        return;
    if (!closing_self && !(closing_self = calloc(1, sizeof *closing_self)))
        return;
    pthread_mutex_lock(&a2n_lock);
    closing_self->count = 0;
    closing_self->nranges = 0;
    snprintf(closing_self->name, sizeof closing_self->name, "%s", lm->l_name);
    closing_self->bias = lm->l_addr;
    dl_iterate_phdr(find_segments, closing_self);
    if (closing_self->nranges && a2n)
        collect_nodes();
    pthread_mutex_unlock(&a2n_lock);
}

JP_NOINSTR static int still_mapped(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    return info->dlpi_addr == closing_self->bias && !strcmp(info->dlpi_name, closing_self->name);
}

/* After dlclose: if the library is gone, its nodes take their names along. */
JP_NOINSTR void jp_names_post_dlclose(void)
{
    if (!closing_self)
        return;
    pthread_mutex_lock(&a2n_lock);
    if (closing_self->count && !dl_iterate_phdr(still_mapped, NULL))
        for (size_t i = 0; i < closing_self->count; i++)
            __atomic_store_n(&jp_node(closing_self->nodes[i])->fn, closing_self->keys[i], __ATOMIC_RELEASE);
    closing_self->count = 0;
    closing_self->nranges = 0;
    pthread_mutex_unlock(&a2n_lock);
}

JP_NOINSTR static int resolve_locked(struct profile *p);

JP_NOINSTR int jp_resolve_names(struct profile *p)
{
    pthread_mutex_lock(&a2n_lock);
    int rc = resolve_locked(p);
    pthread_mutex_unlock(&a2n_lock);
    return rc;
}

JP_NOINSTR static int resolve_locked(struct profile *p)
{
    if (!a2n)
        a2n = a2n_open(0);
    for (uint32_t i = 0; i < p->nfuncs; i++) {
        struct prof_func *f = &p->funcs[i];
        struct a2n_result r;
        char fallback[32];
        const char *sname, *smodule;
        if (jp_synthetic_name(f->addr, &sname, &smodule)) {
            r = (struct a2n_result){ .module = smodule, .function = sname };
        } else if (a2n) {
            a2n_lookup(a2n, f->addr, jp_opt.lines, &r);
        } else {
            snprintf(fallback, sizeof fallback, "0x%llx", (unsigned long long)f->addr);
            r = (struct a2n_result){ .module = "[unknown]", .function = fallback };
        }
        f->name = profile_intern(p, r.function ? r.function : "?");
        f->module = profile_intern(p, r.module ? r.module : "");
        f->file = r.file ? profile_intern(p, r.file) : NULL;
        f->line = r.line;
        if (!f->name || !f->module)
            return -1;
    }
    return 0;
}
