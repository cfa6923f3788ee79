/* Names for the function table, through A2N.  The A2N view of the process
 * is opened at start and re-read when the loaded objects changed since it
 * was read (loaded.c): after a dlopen, before the names of a library
 * about to be closed are looked up, and before a profile is resolved.  Not
 * after a dlclose: the modules A2N saw stay known, so an address in a
 * closed library still resolves (a2n.h), and whatever is mapped there
 * next is read before the next look-up.
 *
 * A library that is closed before the end: its functions are named while
 * it is still mapped (pre-dlclose), and once it is really gone (dlclose
 * may only drop a reference) the tree nodes of its functions become named
 * synthetic frames, so a library mapped later at the same address cannot
 * lend them its names. */
#include "profiler/jprof/jprof.h"
#include "output.h"
#include "profiler/jprof/frames/frames.h"
#include "profiler/jprof/tree/skip.h"
#include "profile/inlined.h"
#include "profile/profile.h"
#include <hookit/a2n.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct a2n *a2n;
static pthread_mutex_t a2n_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t a2n_set; /* the loaded objects a2n last read (loaded.c); under a2n_lock */

/* ---- one unload at a time -------------------------------------------------
 * A thread holds unload_lock from its pre-dlclose to its post-dlclose, and
 * every dlopen takes it to reload the names, before dlopen returns to the
 * program.  So nothing calls into a library mapped while another thread is
 * between closing a library and renaming its nodes: when the post-dlclose
 * looks, a library found at the closed one's place is either the same one
 * still loaded or one nobody has called yet, and no other closer's walk can
 * take the closed library's nodes for its own (which it did, about one run
 * in two of the short stress scenario: a node named after the function at
 * its address in the next library loaded there).
 * Recursive: a library's destructor may dlopen or dlclose.  Bounded: a
 * destructor that waits for a thread that is itself waiting here (joining
 * a worker that closes a library) would deadlock, so after UNLOAD_WAIT_MS a
 * waiter goes on without it (names then only as good as the range walk
 * below makes them). */
static pthread_mutex_t unload_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
#define UNLOAD_WAIT_MS 200

JP_NOINSTR static int unload_lock_take(void)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += (UNLOAD_WAIT_MS % 1000) * 1000000L;
    until.tv_sec += UNLOAD_WAIT_MS / 1000 + until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    return pthread_mutex_timedlock(&unload_lock, &until) == 0;
}

JP_NOINSTR void jp_names_start(void)
{
    a2n = a2n_open(0);
}

JP_NOINSTR static int a2n_reread(void *ctx)
{
    (void)ctx;
    return a2n ? a2n_reload(a2n) : -1;
}

/* Under a2n_lock: a2n re-reads the maps if the loaded objects changed.
 * settled: the caller holds unload_lock. */
JP_NOINSTR static void a2n_refresh(int settled)
{
    if (a2n)
        jp_loaded_refresh(&a2n_set, settled, a2n_reread, NULL);
}

/* After a dlopen.  The maps copy for `hookit recover` is taken here too,
 * under unload_lock, so that no library is unmapped while it is read. */
JP_NOINSTR void jp_names_reload(void)
{
    int held = unload_lock_take();
    jp_arena_maps_changed(held);
    pthread_mutex_lock(&a2n_lock);
    a2n_refresh(held);
    pthread_mutex_unlock(&a2n_lock);
    if (held)
        pthread_mutex_unlock(&unload_lock);
}

/* The forked child's only thread may not be the one that held it. */
JP_NOINSTR void jp_names_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    unload_lock = fresh;
}

/* ---- libraries closed while the program runs ----------------------------
 * pre-dlclose (the library still mapped): every node of its functions in
 * any tree, and their names as synthetic keys.  post-dlclose, if it is
 * really gone, those nodes take their keys.  Another thread holding a
 * reference may have called into it after our pre-dlclose and closed it
 * before us: its new nodes are found by a second walk over the address
 * range and named by their function's key.  A function not seen in any
 * tree at pre-dlclose keeps its address (named at the end by whatever is
 * mapped there then), and the walk is skipped when another library already
 * sits in the range (a dlopen in between, whose caller unload_lock keeps
 * waiting): only that library's constructors could have made nodes there.
 *
 * The libraries the closed one needs (DT_NEEDED, and theirs) may go with
 * it: they are looked at the same way, each renamed only if it is gone. */
/* A growing list of (something, the synthetic key it becomes). */
struct keyed {
    struct keyed_pair { uint64_t what, key; } *v;
    size_t n, cap;
};

/* One library that may be unloaded by the dlclose. */
struct closing_lib {
    char *name;                 /* its path as the loader knows it */
    const char *module;         /* its base name, in name */
    uintptr_t bias;
    uintptr_t lo[8], hi[8];     /* its executable segments */
    unsigned nranges;
    struct keyed functions;     /* its functions seen in pre-dlclose, and their keys */
    struct keyed nodes;         /* the nodes seen in pre-dlclose (refs), and their keys */
    int walk;                   /* each_node_of visits its nodes */
};

#define CLOSING_LIBS 16         /* the closed library and what it needs, at most */
struct closing {
    struct closing_lib libs[CLOSING_LIBS];
    unsigned nlibs;
    int locked;                 /* holds unload_lock until post-dlclose */
    struct closing *outer;      /* a dlclose from a destructor run by dlclose */
};
/* Per thread: two threads may be closing libraries at once, each between
 * its own pre- and post-dlclose, and a library's destructor may close
 * another.  The states are allocated; only a pointer is thread-local (a
 * plugin's static TLS must stay small). */
static __thread struct closing *closing_self __attribute__((tls_model("initial-exec")));

/* Dynamic entries hold addresses that ld.so has usually relocated in place;
 * some stay offsets. */
JP_NOINSTR static uintptr_t dyn_addr(uintptr_t bias, ElfW(Addr) ptr)
{
    return ptr < bias ? bias + ptr : ptr;
}

/* A pass over the loaded modules for one library: its segments, and the
 * libraries it needs added to the closing (found by a second pass). */
struct lib_query {
    struct closing_lib *lib;
    const char *needed[CLOSING_LIBS];
    unsigned nneeded;
};

JP_NOINSTR static void read_needed(struct lib_query *q, const ElfW(Dyn) *dyn, uintptr_t bias)
{
    const char *strtab = NULL;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_STRTAB)
            strtab = (const char *)dyn_addr(bias, d->d_un.d_ptr);
    for (const ElfW(Dyn) *d = dyn; strtab && d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_NEEDED && q->nneeded < CLOSING_LIBS)
            q->needed[q->nneeded++] = strtab + d->d_un.d_val;
}

JP_NOINSTR static int find_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct lib_query *q = arg;
    struct closing_lib *c = q->lib;
    (void)size;
    if (info->dlpi_addr != c->bias || strcmp(info->dlpi_name, c->name) != 0)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && c->nranges < 8) {
            c->lo[c->nranges] = info->dlpi_addr + ph->p_vaddr;
            c->hi[c->nranges++] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        } else if (ph->p_type == PT_DYNAMIC) {
            read_needed(q, (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr), info->dlpi_addr);
        }
    }
    return 1;
}

/* The loaded module a DT_NEEDED name stands for (its path's base name). */
struct soname_query {
    const char *soname;
    char *name;
    uintptr_t bias;
};

JP_NOINSTR static int find_soname(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct soname_query *q = arg;
    (void)size;
    const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    if (!slash || strcmp(slash + 1, q->soname) != 0)
        return 0;
    q->name = strdup(info->dlpi_name);
    q->bias = info->dlpi_addr;
    return 1;
}

JP_NOINSTR static int closing_has(const struct closing *c, const char *name, uintptr_t bias)
{
    for (unsigned i = 0; i < c->nlibs; i++)
        if (c->libs[i].bias == bias && !strcmp(c->libs[i].name, name))
            return 1;
    return 0;
}

JP_NOINSTR static void closing_add(struct closing *c, char *name, uintptr_t bias)
{
    if (!name || c->nlibs == CLOSING_LIBS || closing_has(c, name, bias)) {
        free(name);
        return;
    }
    struct closing_lib *lib = &c->libs[c->nlibs++];
    lib->name = name;
    const char *slash = strrchr(name, '/');
    lib->module = slash ? slash + 1 : name;
    lib->bias = bias;
}

/* The closed library and, breadth first, what it needs. */
JP_NOINSTR static void closing_find_libs(struct closing *c, const struct link_map *lm)
{
    closing_add(c, strdup(lm->l_name), lm->l_addr);
    for (unsigned i = 0; i < c->nlibs; i++) {
        struct lib_query q = { .lib = &c->libs[i] };
        dl_iterate_phdr(find_segments, &q);
        for (unsigned k = 0; k < q.nneeded; k++) {
            struct soname_query s = { .soname = q.needed[k] };
            dl_iterate_phdr(find_soname, &s);
            closing_add(c, s.name, s.bias);
        }
    }
}

JP_NOINSTR static int in_closing(const struct closing_lib *c, uint64_t fn)
{
    for (unsigned i = 0; i < c->nranges; i++)
        if (fn >= c->lo[i] && fn < c->hi[i])
            return 1;
    return 0;
}

JP_NOINSTR static uint64_t known_key(const struct closing_lib *c, uint64_t fn)
{
    for (size_t i = 0; i < c->functions.n; i++)
        if (c->functions.v[i].what == fn)
            return c->functions.v[i].key;
    return 0;
}

/* Out of memory: the pair is left out (its node keeps its address). */
JP_NOINSTR static void keyed_add(struct keyed *k, uint64_t what, uint64_t key)
{
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 64;
        struct keyed_pair *v = realloc(k->v, cap * sizeof *v);
        if (!v)
            return;
        k->v = v;
        k->cap = cap;
    }
    k->v[k->n++] = (struct keyed_pair){ what, key };
}

/* Every node of every thread whose function is in the ranges of one of c's
 * libraries marked walk, with that library. */
JP_NOINSTR static void each_node_of(struct closing *c, void (*fn)(struct closing_lib *, struct arena_node *))
{
    for (arena_ref t = jp_arena_header()->first_thread; t; t = ((struct arena_thread *)jp_at(t))->next) {
        arena_ref root = ((struct arena_thread *)jp_at(t))->root;
        arena_ref r = root ? jp_node(root)->first_child : 0;
        while (r) {
            struct arena_node *n = jp_node(r);
            for (unsigned i = 0; !jp_is_synthetic(n->fn) && i < c->nlibs; i++)
                if (c->libs[i].walk && in_closing(&c->libs[i], n->fn)) {
                    fn(&c->libs[i], n);
                    break;
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

/* pre-dlclose: n and the name of its function, while it can be looked up. */
JP_NOINSTR static void name_function(struct closing_lib *c, struct arena_node *n)
{
    uint64_t key = known_key(c, n->fn);
    if (!key) {
        struct a2n_result r;
        a2n_lookup(a2n, n->fn, 0, &r);
        key = jp_synthetic_key(r.function ? r.function : "?", r.module ? r.module : c->module);
        if (!key)
            return;
        keyed_add(&c->functions, n->fn, key);
    }
    keyed_add(&c->nodes, (uint64_t)(((char *)n - jp_arena_base) / ARENA_SLOT), key);
}

/* post-dlclose, the library gone: n takes its function's key, when the
 * function was seen in pre-dlclose (else it keeps its address). */
JP_NOINSTR static void rename_node(struct closing_lib *c, struct arena_node *n)
{
    uint64_t key = known_key(c, n->fn);
    if (key)
        __atomic_store_n(&n->fn, key, __ATOMIC_RELEASE);
}

JP_NOINSTR static struct closing *push_closing(void)
{
    struct closing *c = calloc(1, sizeof *c);
    if (c) {
        c->outer = closing_self;
        closing_self = c;
    }
    return c;
}

JP_NOINSTR void jp_names_pre_dlclose(void *handle)
{
    struct closing *c = push_closing();
    if (c)
        c->locked = unload_lock_take();
    struct link_map *lm = NULL;
    if (!c || !handle || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name || !*lm->l_name)
        return;
    pthread_mutex_lock(&a2n_lock);
    closing_find_libs(c, lm);
    for (unsigned i = 0; i < c->nlibs; i++)
        c->libs[i].walk = c->libs[i].nranges > 0;
    a2n_refresh(c->locked); /* its functions are looked up: a2n must have read it */
    if (a2n)
        each_node_of(c, name_function);
    pthread_mutex_unlock(&a2n_lock);
}

JP_NOINSTR static int still_mapped(struct dl_phdr_info *info, size_t size, void *arg)
{
    const struct closing_lib *c = arg;
    (void)size;
    return info->dlpi_addr == c->bias && !strcmp(info->dlpi_name, c->name);
}

/* Some library now has a segment in c's ranges. */
JP_NOINSTR static int range_taken(struct dl_phdr_info *info, size_t size, void *arg)
{
    const struct closing_lib *c = arg;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        for (unsigned k = 0; ph->p_type == PT_LOAD && k < c->nranges; k++)
            if (lo < c->hi[k] && hi > c->lo[k])
                return 1;
    }
    return 0;
}

/* After dlclose: each of the libraries that is gone has its nodes take
 * their names along.  Under a2n_lock: a dlopen that maps another library
 * into the range after range_taken() looked cannot hand it to its caller
 * before its DLOPEN event has reloaded the names, which waits for the lock.
 * Only that library's own instrumented constructors, run inside dlopen,
 * could add nodes in the range during the walk and be renamed with it. */
JP_NOINSTR void jp_names_post_dlclose(void)
{
    struct closing *c = closing_self;
    if (!c)
        return;
    closing_self = c->outer;
    pthread_mutex_lock(&a2n_lock);
    int walk = 0;
    for (unsigned i = 0; i < c->nlibs; i++) {
        struct closing_lib *lib = &c->libs[i];
        lib->walk = 0;
        if (!lib->nranges || dl_iterate_phdr(still_mapped, lib))
            continue;
        for (size_t k = 0; k < lib->nodes.n; k++)
            __atomic_store_n(&jp_node((arena_ref)lib->nodes.v[k].what)->fn, lib->nodes.v[k].key,
                             __ATOMIC_RELEASE);
        for (unsigned k = 0; k < lib->nranges; k++)
            jp_skip_forget(lib->lo[k], lib->hi[k]);
        lib->walk = !dl_iterate_phdr(range_taken, lib);
        walk |= lib->walk;
    }
    if (walk)
        each_node_of(c, rename_node);
    pthread_mutex_unlock(&a2n_lock);
    if (c->locked)
        pthread_mutex_unlock(&unload_lock);
    for (unsigned i = 0; i < c->nlibs; i++) {
        free(c->libs[i].name);
        free(c->libs[i].functions.v);
        free(c->libs[i].nodes.v);
    }
    free(c);
}

/* The start of the function holding pc (the address its hooks are given),
 * 0 when no symbol covers it. */
JP_NOINSTR uint64_t jp_names_function_of(uint64_t pc)
{
    struct a2n_result r;
    pthread_mutex_lock(&a2n_lock);
    if (!a2n)
        a2n = a2n_open(0);
    int found = a2n && a2n_lookup(a2n, pc, 0, &r) == 0;
    pthread_mutex_unlock(&a2n_lock);
    return found ? r.symbol_addr : 0;
}

JP_NOINSTR static int resolve_locked(struct profile *p);

JP_NOINSTR int jp_resolve_names(struct profile *p)
{
    pthread_mutex_lock(&a2n_lock);
    int rc = resolve_locked(p);
    pthread_mutex_unlock(&a2n_lock);
    return rc;
}

/* The hook every instrumented module calls: a module that does not name it
 * was not instrumented (libstdc++), and its functions in the tree are
 * copies inlined into other modules (profile/inlined.c). */
static const char hook_symbol[] = PROFILE_HOOK_SYMBOL;

/* Modules whose build-id was looked for (a2n's module strings are stable
 * while it is open, so pointers compare): each is looked for once. */
struct build_ids {
    const char *tried[64];
    unsigned n;
};

/* The build-id of the loaded module holding addr, as the metadata
 * "build_id:MODULE" (once per module), so the tools can tell the binary
 * that ran from a rebuilt one (tools/srclines.c).  Read from the module's
 * program headers in memory at the end of the run: nothing on the hot
 * path.  A module without one gets no key.  0, or -1 when out of memory. */
JP_NOINSTR static int record_build_id(struct profile *p, struct build_ids *b, uint64_t addr,
                                      const char *module)
{
    char key[300], hex[A2N_BUILD_ID_MAX];
    for (unsigned i = 0; i < b->n; i++)
        if (b->tried[i] == module)
            return 0;
    if (b->n < sizeof b->tried / sizeof b->tried[0])
        b->tried[b->n++] = module;
    if (!module || !*module || *module == '['
        || snprintf(key, sizeof key, "build_id:%s", module) >= (int)sizeof key)
        return 0;
    if (profile_get_meta(p, key) || a2n_build_id_loaded(addr, hex, sizeof hex) != 0)
        return 0;
    return profile_set_meta(p, key, hex);
}

JP_NOINSTR static int resolve_locked(struct profile *p)
{
    if (!a2n)
        a2n = a2n_open(0);
    else
        a2n_refresh(0); /* not settled: the next dlopen reads again */
    unsigned char *foreign = calloc(p->nfuncs + 1, 1);
    if (!foreign)
        return -1;
    int any_foreign = 0;
    struct build_ids ids = { .n = 0 };
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
        if (a2n && (r.flags & A2N_FOUND_MODULE) && a2n_module_names(a2n, f->addr, hook_symbol) == 0)
            any_foreign = foreign[i] = 1;
        if (profile_name_func(p, f, r.function, r.module, r.file, r.line) != 0
            || (a2n && (r.flags & A2N_FOUND_MODULE) && record_build_id(p, &ids, f->addr, r.module) != 0)) {
            free(foreign);
            return -1;
        }
    }
    int rc = any_foreign ? profile_attribute_inlined(p, foreign) : 0;
    free(foreign);
    return rc;
}
