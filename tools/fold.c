/*
 * report --collapse-recursion on the tree: a chain of direct recursion
 * (fib -> fib -> fib) folded into one node, as KCachegrind folds a cycle.
 * The folded node has the chain's calls and exclusive time added up and
 * the inclusive time of its outermost activation (which contains the
 * others), so every total stays exact; the children of the folded levels
 * are merged by function (their times are disjoint, so they add up).
 */
#include "tools/fold.h"

#include <stdlib.h>
#include <string.h>

struct slot {
    uint64_t key;               /* parent + 1 << 32 | function, 0 = empty */
    uint32_t node;
};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static int fold_thread(struct profile *p, struct prof_thread *th)
{
    uint32_t n = th->nnodes;
    if (n == 0)
        return 0;
    struct prof_node *out = profile_alloc(p, (size_t)n * sizeof *out);
    uint64_t **cols = calloc(th->nmetrics + 1, sizeof *cols);
    uint32_t *map = malloc((size_t)n * sizeof *map);
    size_t cap = 16;
    while (cap < (size_t)n * 2)
        cap *= 2;
    struct slot *tab = calloc(cap, sizeof *tab);
    int rc = out && cols && map && tab ? 0 : -1;
    for (uint32_t m = 0; rc == 0 && m < th->nmetrics; m++)
        if (!(cols[m] = profile_alloc(p, (size_t)n * sizeof *cols[m])))
            rc = -1;
    uint32_t k = 0;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        const struct prof_node *src = &th->nodes[i];
        uint32_t parent = src->parent == PROF_NONE || src->parent >= i ? PROF_NONE : map[src->parent];
        uint32_t to;
        if (parent != PROF_NONE && out[parent].func == src->func) {
            to = parent;        /* direct recursion: into the caller's node */
            out[to].calls += src->calls;
            out[to].excl_ns += src->excl_ns;
        } else {
            uint64_t key = ((uint64_t)(parent + 1u) << 32 | src->func) + 1;
            size_t h = mix(key) & (cap - 1);
            while (tab[h].key && tab[h].key != key)
                h = (h + 1) & (cap - 1);
            if (tab[h].key) {
                to = tab[h].node;
                out[to].calls += src->calls;
                out[to].excl_ns += src->excl_ns;
                out[to].incl_ns += src->incl_ns;
            } else {
                to = k++;
                tab[h].key = key;
                tab[h].node = to;
                out[to] = (struct prof_node){ src->func, parent, src->calls, src->incl_ns,
                                              src->excl_ns };
                for (uint32_t m = 0; m < th->nmetrics; m++)
                    cols[m][to] = 0;
            }
        }
        for (uint32_t m = 0; m < th->nmetrics; m++)
            cols[m][to] += th->metrics[m].values[i];
        map[i] = to;
    }
    if (rc == 0) {
        th->nodes = out;
        th->nnodes = k;
        for (uint32_t m = 0; m < th->nmetrics; m++)
            th->metrics[m].values = cols[m];
    }
    free(cols);
    free(map);
    free(tab);
    return rc;
}

int fold_recursion(struct profile *p)
{
    for (uint32_t t = 0; t < p->nthreads; t++)
        if (fold_thread(p, &p->threads[t]) != 0)
            return -1;
    return 0;
}
