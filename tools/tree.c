#include "tools/tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The reader guarantees this for files; profiles built in memory (merged,
 * converted from traces) are checked here so no view can index out of
 * bounds. */
static int tree_valid(const struct profile *p, const struct prof_thread *th)
{
    for (uint32_t i = 0; i < th->nnodes; i++) {
        const struct prof_node *n = &th->nodes[i];
        if (n->func >= p->nfuncs || (n->parent != PROF_NONE && n->parent >= i))
            return 0;
    }
    for (uint32_t m = 0; m < th->nmetrics; m++)
        if (th->nnodes && !th->metrics[m].values)
            return 0;
    return 1;
}

int tree_build(struct tree *t, const struct profile *p, const struct prof_thread *th)
{
    uint32_t n = th->nnodes;
    memset(t, 0, sizeof *t);
    if (!tree_valid(p, th)) {
        errno = EINVAL;
        return -1;
    }
    t->prof = p;
    t->thread = th;
    t->n = n;
    t->child_start = calloc((size_t)n + 2, sizeof *t->child_start);
    t->child = malloc(((size_t)n + 1) * sizeof *t->child);
    t->depth = malloc(((size_t)n + 1) * sizeof *t->depth);
    if (!t->child_start || !t->child || !t->depth) {
        tree_free(t);
        errno = ENOMEM;
        return -1;
    }
    /* Counting sort by parent (the virtual root n for roots): children lists
     * come out in node order. */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t par = th->nodes[i].parent == PROF_NONE ? n : th->nodes[i].parent;
        t->child_start[par + 1]++;
        t->depth[i] = par == n ? 0 : t->depth[par] + 1;   /* parents precede children */
    }
    for (uint32_t i = 0; i <= n; i++)
        t->child_start[i + 1] += t->child_start[i];
    uint32_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
    if (!fill) {
        tree_free(t);
        errno = ENOMEM;
        return -1;
    }
    memcpy(fill, t->child_start, ((size_t)n + 1) * sizeof *fill);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t par = th->nodes[i].parent == PROF_NONE ? n : th->nodes[i].parent;
        t->child[fill[par]++] = i;
    }
    free(fill);
    return 0;
}

void tree_free(struct tree *t)
{
    free(t->child_start);
    free(t->child);
    free(t->depth);
    t->child_start = t->child = t->depth = NULL;
}

int tree_cmp_key_desc(const struct tree *t, uint32_t a, uint32_t b)
{
    uint64_t ka = t->sort_key[a], kb = t->sort_key[b];
    return ka != kb ? (ka > kb ? -1 : 1) : tree_cmp_incl_desc(t, a, b);
}

int tree_cmp_incl_desc(const struct tree *t, uint32_t a, uint32_t b)
{
    const struct prof_node *na = &t->thread->nodes[a], *nb = &t->thread->nodes[b];
    if (na->incl_ns != nb->incl_ns)
        return na->incl_ns > nb->incl_ns ? -1 : 1;
    if (na->calls != nb->calls)
        return na->calls > nb->calls ? -1 : 1;
    const char *sa = tree_func(t, a)->name, *sb = tree_func(t, b)->name;
    int c = strcmp(sa ? sa : "", sb ? sb : "");
    if (c)
        return c;
    return a < b ? -1 : a > b;
}

struct sort_ctx {
    const struct tree *t;
    tree_cmp_fn cmp;
};

static int sort_trampoline(const void *a, const void *b, void *vctx)
{
    const struct sort_ctx *c = vctx;
    return c->cmp(c->t, *(const uint32_t *)a, *(const uint32_t *)b);
}

void tree_sort(struct tree *t, tree_cmp_fn cmp)
{
    struct sort_ctx c = { t, cmp };
    for (uint32_t i = 0; i <= t->n; i++)
        if (tree_nchildren(t, i) > 1)
            qsort_r(t->child + t->child_start[i], tree_nchildren(t, i), sizeof *t->child,
                    sort_trampoline, &c);
}

int tree_walk(const struct tree *t, tree_visit_fn pre, tree_visit_fn post, void *ctx)
{
    /* Explicit stack of (node, next child position); depth is bounded by n. */
    struct frame { uint32_t node, next; } *stack = malloc(((size_t)t->n + 1) * sizeof *stack);
    if (!stack)
        return -1;
    size_t sp = 0;
    stack[sp++] = (struct frame){ t->n, 0 };
    while (sp > 0) {
        struct frame *f = &stack[sp - 1];
        if (f->next < tree_nchildren(t, f->node)) {
            uint32_t c = tree_children(t, f->node)[f->next++];
            if (pre)
                pre(t, c, ctx);
            stack[sp++] = (struct frame){ c, 0 };
        } else {
            if (post && f->node != t->n)
                post(t, f->node, ctx);
            sp--;
        }
    }
    free(stack);
    return 0;
}

struct totals_ctx {
    struct func_total *totals;
    uint32_t *active;           /* per function: activations on the current path */
};

static void totals_enter(const struct tree *t, uint32_t node, void *vctx)
{
    struct totals_ctx *c = vctx;
    const struct prof_node *n = &t->thread->nodes[node];
    struct func_total *ft = &c->totals[n->func];
    ft->calls += n->calls;
    ft->self_ns += n->excl_ns;
    ft->nodes++;
    if (c->active[n->func]++ == 0)
        ft->incl_ns += n->incl_ns;
}

static void totals_leave(const struct tree *t, uint32_t node, void *vctx)
{
    struct totals_ctx *c = vctx;
    c->active[t->thread->nodes[node].func]--;
}

int tree_func_totals(const struct tree *t, struct func_total *totals)
{
    struct totals_ctx c = { totals, calloc(t->prof->nfuncs ? t->prof->nfuncs : 1,
                                           sizeof *c.active) };
    if (!c.active)
        return -1;
    int rc = tree_walk(t, totals_enter, totals_leave, &c);
    free(c.active);
    return rc;
}
