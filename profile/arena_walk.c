/* One walk of a thread's arena tree, shared by the profiler and the live
 * reader (arena_walk.h). */
#include "profile/arena_walk.h"
#include "profile/procinfo.h"

#include <stdlib.h>
#include <string.h>

const struct arena_node *arena_view_node(const struct arena_view *v, arena_ref ref)
{
    uint64_t off = (uint64_t)ref * ARENA_SLOT;
    if (ref < 2 || off + ARENA_SLOT > v->size)
        return NULL;
    return (const struct arena_node *)(v->base + off);
}

uint32_t arena_copy_pending(const struct arena_view *v, uint32_t req, uint64_t at,
                            struct arena_copy_node *nodes, uint32_t n, struct arena_frame *stack,
                            uint32_t *depth)
{
    if (!(req & ARENA_REQ_PENDING))
        return n;
    for (uint32_t d = 1; stack && d <= *depth; d++)
        if (stack[d].t0 < at)
            stack[d].t0 = at;
    if (!(req & ARENA_REQ_RESET)) {
        for (uint32_t i = 0; i < n; i++)
            nodes[i].calls = nodes[i].incl = nodes[i].samples = 0;
        return n;
    }
    /* Reset: the open path is the whole tree, a chain from the root down.
     * The copy had at least these nodes (they are in the tree), so they
     * fit where it was. */
    uint32_t kept = 0;
    while (stack && kept < *depth && kept < n) {
        const struct arena_node *node = arena_view_node(v, stack[kept + 1].node);
        if (!node)
            break;
        nodes[kept] = (struct arena_copy_node){
            .fn = __atomic_load_n(&node->fn, __ATOMIC_RELAXED),
            .ref = stack[kept + 1].node,
            .parent = kept ? kept - 1 : UINT32_MAX,
        };
        kept++;
    }
    *depth = kept;
    return kept;
}

static arena_ref load_ref(const volatile arena_ref *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Preorder without a stack, by parent links (nodes never move and a
 * parent link never changes, so this is safe on a tree that grows), and
 * without allocating: a thread may walk its own tree at a hook exit, even
 * in a signal handler. */
uint64_t arena_tree_walk(const struct arena_view *v, arena_ref root, arena_visit_fn visit, void *ctx,
                         int *complete)
{
    uint64_t count = 0, limit = v->size / ARENA_SLOT;
    uint32_t depth = 0;
    int ok = 1;
    const struct arena_node *rn = arena_view_node(v, root);
    arena_ref r = rn ? load_ref(&rn->first_child) : 0;
    if (!rn)
        ok = 0;
    while (r) {
        const struct arena_node *node = arena_view_node(v, r);
        if (!node || count >= limit || (visit && visit(ctx, r, node) != 0)) {
            ok = 0;
            break;
        }
        count++;
        arena_ref child = load_ref(&node->first_child);
        if (child) {
            depth++;
            r = child;
            continue;
        }
        while (r != root) {
            node = arena_view_node(v, r);
            if (!node) {
                ok = 0;
                r = 0;
                break;
            }
            arena_ref next = load_ref(&node->next_sibling);
            if (next) {
                r = next;
                break;
            }
            r = node->parent;
            if (depth == 0) {   /* back at the root, or a link leading elsewhere: corrupt */
                ok = r == root;
                r = 0;
                break;
            }
            depth--;
        }
        if (r == root)
            r = 0;
    }
    if (complete)
        *complete = ok;
    return count;
}

struct copy_ctx {
    struct arena_copy_node *out;
    uint64_t n, cap;
};

/* The parent's index: the previous node or one of its ancestors (preorder),
 * found by following their parent indexes; amortised O(1) per node. */
static int copy_one(void *vctx, arena_ref ref, const struct arena_node *node)
{
    struct copy_ctx *c = vctx;
    if (c->n >= c->cap)
        return -1;
    uint32_t parent = c->n ? (uint32_t)(c->n - 1) : UINT32_MAX;
    while (parent != UINT32_MAX && c->out[parent].ref != node->parent)
        parent = c->out[parent].parent;
    struct arena_copy_node *o = &c->out[c->n++];
    o->fn = node->fn;
    o->calls = node->calls;
    o->incl = node->incl;
    o->samples = node->samples;
    o->ref = ref;
    o->parent = parent;
    return 0;
}

uint64_t arena_tree_copy(const struct arena_view *v, arena_ref root, struct arena_copy_node *out,
                         uint64_t cap, int *complete)
{
    if (!out)
        return arena_tree_walk(v, root, NULL, NULL, complete);
    struct copy_ctx c = { out, 0, cap };
    arena_tree_walk(v, root, copy_one, &c, complete);
    return c.n;
}

/* ---- a thread's copy under its seq ------------------------------------------ */

int arena_thread_copy_reserve(struct arena_thread_copy *c, uint64_t n, uint32_t depth)
{
    if (n > c->cap) {
        uint64_t want = n > 2 * c->cap ? n : 2 * c->cap;
        void *p = realloc(c->nodes, want * sizeof *c->nodes);
        if (!p)
            return -1;
        c->nodes = p;
        c->cap = want;
    }
    if (depth + 1 > c->fcap) {
        uint32_t want = depth + 1 > 2 * c->fcap ? depth + 1 : 2 * c->fcap;
        void *p = realloc(c->stack, (size_t)want * sizeof *c->stack);
        if (!p)
            return -1;
        c->stack = p;
        c->fcap = want;
    }
    return 0;
}

void arena_thread_copy_free(struct arena_thread_copy *c)
{
    free(c->nodes);
    free(c->stack);
    memset(c, 0, sizeof *c);
}

/* depth + 1 frames at ref, or NULL when they are not all in the view. */
static const struct arena_frame *view_frames(const struct arena_view *v, arena_ref ref, uint32_t depth)
{
    uint64_t off = (uint64_t)ref * ARENA_SLOT, size = ((uint64_t)depth + 1) * sizeof(struct arena_frame);
    if (!ref || off + size > v->size || off + size < off)
        return NULL;
    return (const struct arena_frame *)(v->base + off);
}

static int seq_moved(const struct arena_thread *rec, uint32_t s1)
{
    return __atomic_load_n(&rec->seq, __ATOMIC_ACQUIRE) != s1;
}

int arena_copy_thread(const struct arena_view *v, const struct arena_thread *rec, unsigned flags,
                      struct arena_thread_copy *c)
{
    uint32_t s1 = __atomic_load_n(&rec->seq, __ATOMIC_ACQUIRE);
    if ((s1 & 1) && !(flags & ARENA_COPY_ODD))
        return 0;
    /* A reset or zerobase the thread has not applied yet (it is blocked):
     * shown applied, as the thread will apply it (profile/arena.h). */
    uint32_t pending =
        flags & ARENA_COPY_PENDING ? __atomic_load_n(&rec->request, __ATOMIC_ACQUIRE) & ARENA_REQ_PENDING : 0;
    uint64_t pending_at = rec->pending_at;
    arena_ref root = __atomic_load_n(&rec->root, __ATOMIC_ACQUIRE);
    uint32_t depth = flags & ARENA_COPY_FRAMES ? rec->depth : 0;
    arena_ref stack_ref = rec->stack;
    /* Never walk with no buffer: arena_tree_copy would count, not copy. */
    if (!c->nodes && arena_thread_copy_reserve(c, 256, 64) != 0)
        return -1;
    int complete;
    uint64_t n = arena_tree_copy(v, root, c->nodes, c->cap, &complete);
    if (!complete) {
        if (seq_moved(rec, s1))
            return 0; /* torn: the walk may have been cut by it */
        if (n < c->cap)
            return -1; /* a reference outside the arena: damaged */
        uint64_t all = arena_tree_copy(v, root, NULL, UINT64_MAX, NULL);
        return arena_thread_copy_reserve(c, all + 16, depth) == 0 ? 0 : -1;
    }
    if (arena_thread_copy_reserve(c, n, depth) != 0)
        return -1;
    if (flags & ARENA_COPY_FRAMES) {
        const struct arena_frame *stack = view_frames(v, stack_ref, depth);
        if (!stack)
            return seq_moved(rec, s1) ? 0 : -1;
        memcpy(c->stack, stack, ((size_t)depth + 1) * sizeof *stack);
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    int consistent = __atomic_load_n(&rec->seq, __ATOMIC_RELAXED) == s1;
    c->n = arena_copy_pending(v, pending, pending_at, c->nodes, (uint32_t)n,
                              flags & ARENA_COPY_FRAMES ? c->stack : NULL, &depth);
    c->depth = depth;
    c->pending = pending;
    c->pending_at = pending_at;
    c->taken = 1;
    return consistent;
}

/* ---- the function table --------------------------------------------------- */

int arena_funcs_init(struct arena_funcs *f)
{
    memset(f, 0, sizeof *f);
    return u64map_room(&f->map);
}

int64_t arena_funcs_index(struct arena_funcs *f, uint64_t fn)
{
    if (u64map_room(&f->map) != 0)
        return -1;
    size_t i = u64map_slot(&f->map, fn);
    if (f->map.keys[i])
        return f->map.vals[i];
    if (f->n == f->cap) {
        uint32_t cap = f->cap ? f->cap * 2 : 256;
        struct prof_func *a = realloc(f->array, cap * sizeof *a);
        if (!a)
            return -1;
        f->array = a;
        f->cap = cap;
    }
    memset(&f->array[f->n], 0, sizeof *f->array);
    f->array[f->n].addr = fn;
    u64map_put(&f->map, i, fn, f->n);
    return f->n++;
}

int arena_funcs_to_profile(struct arena_funcs *f, struct profile *p)
{
    p->funcs = profile_alloc(p, (size_t)f->n * sizeof *p->funcs + 1);
    if (!p->funcs)
        return -1;
    if (f->n)
        memcpy(p->funcs, f->array, (size_t)f->n * sizeof *p->funcs);
    p->nfuncs = f->n;
    return 0;
}

void arena_funcs_free(struct arena_funcs *f)
{
    u64map_free(&f->map);
    free(f->array);
    memset(f, 0, sizeof *f);
}

/* ---- a copy to a profile thread ----------------------------------------------- */

int arena_copy_to_thread(struct profile *p, struct arena_funcs *funcs,
                         const struct arena_copy_node *nodes, uint32_t n,
                         const struct arena_frame *stack, uint32_t depth, uint64_t now,
                         const struct arena_timing *tm, struct prof_thread *th)
{
    int sampled = tm->sample_period_ns != 0;
    int compensate = tm->compensate && !sampled;
    th->nodes = profile_alloc(p, (size_t)n * sizeof *th->nodes + 1);
    uint32_t *tree_depth = malloc(((size_t)n + 1) * sizeof *tree_depth);
    uint64_t *child_sum = calloc((size_t)n + 1, sizeof *child_sum);
    uint64_t *below = compensate ? calloc((size_t)n + 1, sizeof *below) : NULL;
    int rc = th->nodes && tree_depth && child_sum && (below || !compensate) ? 0 : -1;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        const struct arena_copy_node *c = &nodes[i];
        int64_t f = arena_funcs_index(funcs, c->fn);
        if (f < 0) {
            rc = -1;
            break;
        }
        uint32_t d = c->parent == UINT32_MAX || c->parent >= i ? 1 : tree_depth[c->parent] + 1;
        tree_depth[i] = d;
        /* An open frame's time so far (sampled: only a blocking call's). */
        uint64_t ticks = c->incl, open = 0;
        if (d <= depth && stack[d].node == c->ref && now > stack[d].t0
            && (!sampled || (tm->open_waits && stack[d].t0)))
            open = now - stack[d].t0;
        struct prof_node *out = &th->nodes[i];
        out->func = (uint32_t)f;
        out->parent = c->parent < i ? c->parent : PROF_NONE;
        out->calls = c->calls;
        out->incl_ns = sampled ? c->samples * tm->sample_period_ns + arena_ticks_to_ns(open, tm->ticks_per_ns)
                               : arena_ticks_to_ns(ticks + open, tm->ticks_per_ns);
    }
    th->nnodes = rc == 0 ? n : 0;
    /* Exclusive = inclusive - children's inclusive; sampled: the samples
     * were exclusive (held in incl_ns until here), inclusive adds the
     * children.  Children come after their parents.  compensate: a node's
     * inclusive time loses the inner overhead of its own calls and the full
     * overhead of every call below it. */
    for (uint32_t i = th->nnodes; i-- > 0;) {
        struct prof_node *nd = &th->nodes[i];
        if (compensate) {
            uint64_t cost = nd->calls * tm->overhead_inner_ns + below[i] * tm->overhead_full_ns;
            nd->incl_ns = nd->incl_ns > cost ? nd->incl_ns - cost : 0;
            /* The overhead is an average: where a node's own time is smaller
             * than its share, its exclusive time ends at zero rather than
             * below, and the node still holds its children. */
            if (nd->incl_ns < child_sum[i])
                nd->incl_ns = child_sum[i];
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
    free(tree_depth);
    free(child_sum);
    free(below);
    return rc;
}

/* ---- contexts of inlined copies ----------------------------------------------- */

int arena_inlined_column(struct profile *p, struct prof_thread *th, const struct arena_view *v,
                         const struct arena_copy_node *nodes, uint32_t n)
{
    uint64_t *col = NULL;
    for (uint32_t i = 0; i < n; i++) {
        const struct arena_node *a = arena_view_node(v, nodes[i].ref);
        /* (an MPI frame's bytes never reach the top bit) */
        if (!a || !(__atomic_load_n(&a->reserved, __ATOMIC_RELAXED) & ARENA_NODE_INLINED))
            continue;
        if (!col && !(col = profile_new_column(p, th, "inlined", n)))
            return -1;
        col[i] = 1;
    }
    return 0;
}

/* ---- sampled times ---------------------------------------------------------------- */

/* timer=sample: a node's time is its on-CPU samples plus its measured
 * blocking calls (wait_ns), so time means what it means under timer=exact
 * and the program's own clock: elapsed, less only the time the kernel kept
 * the thread off a CPU it was ready for.  Each node's sample count goes
 * in the `samples` column, for the estimate's error (docs/performance.md). */
int arena_sampled_times(struct profile *p, struct prof_thread *th, const struct arena_copy_node *nodes)
{
    uint64_t *samples = profile_new_column(p, th, "samples", th->nnodes);
    if (!samples)
        return -1;
    const struct prof_metric *wait = profile_find_metric(th, "wait_ns");
    uint64_t *below = wait ? calloc((size_t)th->nnodes + 1, sizeof *below) : NULL;
    if (wait && !below)
        return -1;
    /* Children come after their parents: a node's subtree has its waits
     * summed in below[] by the time the node is reached. */
    for (uint32_t i = th->nnodes; i-- > 0;) {
        struct prof_node *nd = &th->nodes[i];
        samples[i] = nodes[i].samples;
        if (!wait)
            continue;
        uint64_t subtree = wait->values[i] + below[i];
        nd->excl_ns += wait->values[i];
        nd->incl_ns += subtree;
        if (nd->parent != PROF_NONE)
            below[nd->parent] += subtree;
    }
    free(below);
    return 0;
}

/* ---- the control log ------------------------------------------------------------ */

int arena_control_log_read(const struct arena_control_log *log, struct arena_control_log *out)
{
    for (int tries = 0; tries < 1000; tries++) {
        uint32_t seq = __atomic_load_n(&log->seq, __ATOMIC_ACQUIRE);
        if (seq & 1)
            continue;
        out->command = __atomic_load_n(&log->command, __ATOMIC_RELAXED);
        out->count = __atomic_load_n(&log->count, __ATOMIC_RELAXED);
        out->mono_ns = __atomic_load_n(&log->mono_ns, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&log->seq, __ATOMIC_RELAXED) == seq) {
            out->seq = seq;
            return 0;
        }
    }
    memset(out, 0, sizeof *out);
    return -1;
}

int arena_control_log_meta(struct profile *p, const struct arena_control_log *log, uint64_t start_mono_ns)
{
    struct arena_control_log c;
    if (!log || arena_control_log_read(log, &c) != 0 || !c.count)
        return 0;
    const char *what = NULL;
    if (c.command == ARENA_CMD_RESET)
        what = "reset";
    else if (c.command == ARENA_CMD_ZEROBASE)
        what = "zerobase";
    if (!what)
        return 0; /* a damaged log: say nothing rather than something wrong */
    int rc = profile_set_meta(p, "reset_command", what);
    rc |= procinfo_set_meta_u64(p, "reset_count", c.count);
    rc |= procinfo_set_meta_u64(p, "reset_at_ns", c.mono_ns > start_mono_ns ? c.mono_ns - start_mono_ns : 0);
    return rc ? -1 : 0;
}
