/* From the live trees to a struct profile: every thread's tree in preorder,
 * open frames counted up to now (without touching the live tree, so a
 * flush leaves collection undisturbed), exclusive time derived, and a
 * function table of every distinct address (names come later, names.c). */
#include "jprof.h"
#include "profile/profile.h"

#include <stdlib.h>
#include <string.h>

/* ---- a map from a 32/64-bit key to a value, open addressing ---------- */
struct u64map {
    uint64_t *keys;             /* 0 = empty */
    uint64_t *vals;
    size_t mask, count;
};

JP_NOINSTR static int map_init(struct u64map *m, size_t want)
{
    size_t cap = 16;
    while (cap < want * 2)
        cap *= 2;
    m->keys = calloc(cap, sizeof *m->keys);
    m->vals = calloc(cap, sizeof *m->vals);
    m->mask = cap - 1;
    m->count = 0;
    return m->keys && m->vals ? 0 : -1;
}

JP_NOINSTR static void map_free(struct u64map *m)
{
    free(m->keys);
    free(m->vals);
}

JP_NOINSTR static size_t slot_of(const struct u64map *m, uint64_t key)
{
    size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & m->mask;
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & m->mask;
    return i;
}

JP_NOINSTR static int map_grow(struct u64map *m)
{
    struct u64map bigger;
    if (map_init(&bigger, (m->mask + 1)) != 0)
        return -1;
    for (size_t i = 0; i <= m->mask; i++)
        if (m->keys[i]) {
            size_t j = slot_of(&bigger, m->keys[i]);
            bigger.keys[j] = m->keys[i];
            bigger.vals[j] = m->vals[i];
        }
    bigger.count = m->count;
    map_free(m);
    *m = bigger;
    return 0;
}

/* Pointer to the value for key (inserted as 0 when new), or NULL on OOM. */
JP_NOINSTR static uint64_t *map_get(struct u64map *m, uint64_t key, int *created)
{
    if ((m->count + 1) * 2 > m->mask + 1 && map_grow(m) != 0)
        return NULL;
    size_t i = slot_of(m, key);
    *created = !m->keys[i];
    if (*created) {
        m->keys[i] = key;
        m->vals[i] = 0;
        m->count++;
    }
    return &m->vals[i];
}

JP_NOINSTR static uint64_t map_find(const struct u64map *m, uint64_t key)
{
    if (!m->keys)
        return 0;
    size_t i = slot_of(m, key);
    return m->keys[i] ? m->vals[i] : 0;
}

/* ---- building ----------------------------------------------------------- */
struct builder {
    struct profile *p;
    struct u64map funcs;        /* fn address -> index + 1 */
    struct prof_func *func_array;
    uint32_t nfuncs, func_cap;
    uint64_t now;
};

JP_NOINSTR static int64_t func_index(struct builder *b, uint64_t fn)
{
    int created;
    uint64_t *v = map_get(&b->funcs, fn, &created);
    if (!v)
        return -1;
    if (!created)
        return (int64_t)*v - 1;
    if (b->nfuncs == b->func_cap) {
        uint32_t cap = b->func_cap ? b->func_cap * 2 : 256;
        struct prof_func *a = realloc(b->func_array, cap * sizeof *a);
        if (!a)
            return -1;
        b->func_array = a;
        b->func_cap = cap;
    }
    memset(&b->func_array[b->nfuncs], 0, sizeof *b->func_array);
    b->func_array[b->nfuncs].addr = fn;
    *v = ++b->nfuncs;
    return (int64_t)*v - 1;
}

/* Ticks to add to nodes that are open in this thread's shadow stack. */
JP_NOINSTR static int open_frames(const struct arena_thread *rec, uint64_t now, struct u64map *open)
{
    const struct jp_thread *t = (const struct jp_thread *)(uintptr_t)rec->priv;
    memset(open, 0, sizeof *open);
    if (!t || rec->state != ARENA_THREAD_RUNNING || t->depth == 0)
        return 0;
    uint32_t depth = t->depth;
    if (map_init(open, depth) != 0)
        return -1;
    for (uint32_t i = 1; i <= depth; i++) {
        int created;
        uint64_t *v = map_get(open, t->stack[i].node, &created);
        if (!v)
            return -1;
        if (now > t->stack[i].t0)
            *v += now - t->stack[i].t0;
    }
    return 0;
}

JP_NOINSTR static uint32_t count_nodes(arena_ref root)
{
    uint32_t n = 0;
    arena_ref r = jp_node(root)->first_child;
    while (r) {                 /* preorder without a stack, by parent links */
        n++;
        struct arena_node *node = jp_node(r);
        if (node->first_child) {
            r = node->first_child;
            continue;
        }
        while (r && r != root && !jp_node(r)->next_sibling)
            r = jp_node(r)->parent;
        r = (r && r != root) ? jp_node(r)->next_sibling : 0;
    }
    return n;
}

/* The thread's tree in preorder into th->nodes; parent indexes are found
 * through a small stack of (ref, index) along the current path. */
JP_NOINSTR static int fill_nodes(struct builder *b, const struct arena_thread *rec, struct prof_thread *th)
{
    struct u64map open;
    if (open_frames(rec, b->now, &open) != 0)
        return -1;
    int sampled = jp_sampling();
    uint64_t period = jp_sample_period_ns();
    uint32_t n = count_nodes(rec->root);
    th->nodes = profile_alloc(b->p, (size_t)n * sizeof *th->nodes + 1);
    uint32_t *path = malloc(((size_t)n + 1) * sizeof *path);   /* index of each depth's node */
    uint64_t *child_sum = calloc((size_t)n + 1, sizeof *child_sum);
    int rc = (th->nodes && path && child_sum) ? 0 : -1;
    uint32_t count = 0, depth = 0;
    arena_ref r = rc ? 0 : jp_node(rec->root)->first_child;
    while (r && count < n) {
        struct arena_node *node = jp_node(r);
        int64_t f = func_index(b, node->fn);
        if (f < 0) {
            rc = -1;
            break;
        }
        struct prof_node *out = &th->nodes[count];
        out->func = (uint32_t)f;
        out->parent = depth ? path[depth - 1] : PROF_NONE;
        out->calls = node->calls;
        out->incl_ns = sampled ? node->samples * period : jp_ticks_to_ns(node->incl + map_find(&open, r));
        path[depth] = count++;
        if (node->first_child) {
            depth++;
            r = node->first_child;
            continue;
        }
        while (r != rec->root && !jp_node(r)->next_sibling) {
            r = jp_node(r)->parent;
            depth--;
        }
        r = r != rec->root ? jp_node(r)->next_sibling : 0;
    }
    th->nnodes = count;
    /* Exclusive = inclusive - children's inclusive; sampled: the samples
     * were exclusive (held in incl_ns until here), inclusive adds the
     * children.  Children come after their parents.  compensate: a node's
     * inclusive time loses the inner overhead of its own calls and the full
     * overhead of every call below it (calibrate.c). */
    int compensate = jp_opt.compensate && !sampled;
    uint64_t o_full = jp_ticks_to_ns(jp_overhead_full_ticks());
    uint64_t o_inner = jp_ticks_to_ns(jp_overhead_inner_ticks());
    uint64_t *below = compensate ? calloc((size_t)count + 1, sizeof *below) : NULL;
    if (compensate && !below)
        rc = -1;
    for (uint32_t i = count; rc == 0 && i-- > 0;) {
        struct prof_node *nd = &th->nodes[i];
        if (compensate) {
            uint64_t cost = nd->calls * o_inner + below[i] * o_full;
            nd->incl_ns = nd->incl_ns > cost ? nd->incl_ns - cost : 0;
            if (nd->parent != PROF_NONE)
                below[nd->parent] += nd->calls + below[i];
        }
        if (sampled) {
            nd->excl_ns = nd->incl_ns;
            nd->incl_ns += child_sum[i];
        } else {
            nd->excl_ns = nd->incl_ns > child_sum[i] ? nd->incl_ns - child_sum[i] : 0;
        }
        if (nd->parent != PROF_NONE)
            child_sum[nd->parent] += nd->incl_ns;
    }
    free(path);
    free(child_sum);
    free(below);
    map_free(&open);
    return rc;
}

JP_NOINSTR static int by_index(const void *a, const void *b)
{
    const struct arena_thread *x = *(const struct arena_thread *const *)a;
    const struct arena_thread *y = *(const struct arena_thread *const *)b;
    return (x->index > y->index) - (x->index < y->index);
}

JP_NOINSTR static int add_threads(struct builder *b)
{
    uint32_t n = 0;
    for (arena_ref r = jp_arena_header()->first_thread; r; r = ((struct arena_thread *)jp_at(r))->next)
        n++;
    struct arena_thread **recs = malloc((n + 1) * sizeof *recs);
    b->p->threads = profile_alloc(b->p, (n + 1) * sizeof *b->p->threads);
    if (!recs || !b->p->threads) {
        free(recs);
        return -1;
    }
    uint32_t i = 0;
    for (arena_ref r = jp_arena_header()->first_thread; r && i < n; r = ((struct arena_thread *)jp_at(r))->next)
        recs[i++] = jp_at(r);
    qsort(recs, i, sizeof *recs, by_index);
    int rc = 0;
    for (uint32_t k = 0; k < i && rc == 0; k++) {
        struct prof_thread *th = &b->p->threads[k];
        memset(th, 0, sizeof *th);
        th->tid = recs[k]->tid;
        th->index = recs[k]->index;
        char name[sizeof recs[k]->name + 1] = { 0 };
        memcpy(name, recs[k]->name, sizeof recs[k]->name);
        th->name = profile_intern(b->p, name);
        rc = fill_nodes(b, recs[k], th);
    }
    b->p->nthreads = i;
    free(recs);
    return rc;
}

/* Defined in process.c: pid, exe, argv, times, metadata. */
int jp_fill_process(struct profile *p, int how);
/* Defined in names.c. */
int jp_resolve_names(struct profile *p);

JP_NOINSTR struct profile *jp_build_profile(int how)
{
    struct builder b = { .p = profile_new() };
    jp_clock_calibrate();
    b.now = jp_now();
    int rc = b.p && map_init(&b.funcs, 1024) == 0 ? 0 : -1;
    if (rc == 0)
        rc = jp_fill_process(b.p, how);
    if (rc == 0)
        rc = add_threads(&b);
    if (rc == 0) {
        b.p->funcs = profile_alloc(b.p, (size_t)b.nfuncs * sizeof *b.p->funcs + 1);
        rc = b.p->funcs ? 0 : -1;
    }
    if (rc == 0) {
        memcpy(b.p->funcs, b.func_array, (size_t)b.nfuncs * sizeof *b.p->funcs);
        b.p->nfuncs = b.nfuncs;
        rc = jp_resolve_names(b.p);
    }
    map_free(&b.funcs);
    free(b.func_array);
    if (rc != 0 && b.p) {
        profile_free(b.p);
        return NULL;
    }
    return b.p;
}
