/*
 * Call trees for the views: a thread's parent-indexed node array turned
 * into children lists, sortable, walked in preorder without recursion (a
 * deep recursion in the profiled program makes a deep tree), and
 * per-function totals for flat views.
 */
#ifndef HOOKIT_TOOLS_TREE_H
#define HOOKIT_TOOLS_TREE_H

#include <stdint.h>

#include "profile/profile.h"

struct tree {
    const struct profile *prof;
    const struct prof_thread *thread;
    uint32_t n;                 /* nodes; index n is the virtual root above the roots */
    uint32_t *child_start;      /* children of i: child[child_start[i] .. child_start[i+1]) */
    uint32_t *child;
    uint32_t *depth;            /* 0 for a root */
    const uint64_t *sort_key;   /* per node, for tree_cmp_key_desc (the caller's; NULL) */
};

/* Build t for thread th of p (children in node order).  0, or -1 with errno
 * ENOMEM, or EINVAL when a node's function or parent index is out of range
 * (parents must precede their children) or a metric has no values. */
int tree_build(struct tree *t, const struct profile *p, const struct prof_thread *th);
void tree_free(struct tree *t);

static inline uint32_t tree_nchildren(const struct tree *t, uint32_t node)
{
    return t->child_start[node + 1] - t->child_start[node];
}

static inline const uint32_t *tree_children(const struct tree *t, uint32_t node)
{
    return t->child + t->child_start[node];
}

static inline const struct prof_func *tree_func(const struct tree *t, uint32_t node)
{
    return &t->prof->funcs[t->thread->nodes[node].func];
}

/* Orders two sibling nodes: < 0 if a comes first. */
typedef int (*tree_cmp_fn)(const struct tree *t, uint32_t a, uint32_t b);

/* Inclusive time descending, then calls descending, then name, then node
 * index: a total order, so output is stable. */
int tree_cmp_incl_desc(const struct tree *t, uint32_t a, uint32_t b);

/* t->sort_key descending, then as tree_cmp_incl_desc (--sort cpu|wait:
 * the key is the subtree's CPU or wait time). */
int tree_cmp_key_desc(const struct tree *t, uint32_t a, uint32_t b);

/* Sort every children list (and the roots) with cmp. */
void tree_sort(struct tree *t, tree_cmp_fn cmp);

/* Visit every node in preorder: pre(node) before its children, post(node)
 * after them (either may be NULL).  0, or -1 (no memory). */
typedef void (*tree_visit_fn)(const struct tree *t, uint32_t node, void *ctx);
int tree_walk(const struct tree *t, tree_visit_fn pre, tree_visit_fn post, void *ctx);

/* A function's totals over every calling context of one thread. */
struct func_total {
    uint64_t calls;
    uint64_t self_ns;           /* sum of exclusive times */
    uint64_t incl_ns;           /* sum of inclusive times of its outermost
                                 * activations: a node with an ancestor of the
                                 * same function is not counted again */
    uint32_t nodes;             /* contexts it appears in; 0 = not in this thread */
};

/* totals[nfuncs] (zeroed by the caller) filled for t's thread.  0 or -1. */
int tree_func_totals(const struct tree *t, struct func_total *totals);

#endif
