/*
 * profcheck: reads hookit profiles and checks they are consistent, for the
 * stress and reliability tests (tests/lib/stress.py).  Works on trees of any
 * size or depth (a million-deep recursion), where JSON would not.
 *
 *   profcheck PROFILE...
 *
 * Fails (exit 1, one line on stderr naming the file) when a node's
 * function is out of range, a parent does not come before its child,
 * exclusive time exceeds inclusive, a parent's inclusive time is less than
 * the sum of its children's, a node has no calls, or a time exceeds the
 * process's duration.  Otherwise prints, summed over every input:
 *   profiles N / threads N / nodes N / maxdepth N
 *   func NAME<tab>CALLS           calls of each function over all its nodes
 *   edge PARENT<tab>CHILD<tab>CALLS  calls of CHILD made from PARENT ("-": a root)
 *   meta KEY<tab>SUM           dropped_events and unmatched_exits, summed
 */
#include "profile/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct agg {
    char *key;
    unsigned long long calls;
};
static struct agg *aggs;
static size_t naggs, cap;

/* Linear-probing table keyed by string. */
static size_t tsize;
static size_t *table;

static size_t hash(const char *s)
{
    size_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void grow(void)
{
    size_t nsize = tsize ? tsize * 2 : 4096;
    size_t *nt = calloc(nsize, sizeof *nt);
    if (!nt) {
        fprintf(stderr, "profcheck: out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < naggs; i++) {
        size_t j = hash(aggs[i].key) & (nsize - 1);
        while (nt[j])
            j = (j + 1) & (nsize - 1);
        nt[j] = i + 1;
    }
    free(table);
    table = nt;
    tsize = nsize;
}

static void add(const char *key, unsigned long long calls)
{
    if ((naggs + 1) * 2 > tsize)
        grow();
    size_t j = hash(key) & (tsize - 1);
    while (table[j] && strcmp(aggs[table[j] - 1].key, key))
        j = (j + 1) & (tsize - 1);
    if (table[j]) {
        aggs[table[j] - 1].calls += calls;
        return;
    }
    if (naggs == cap) {
        cap = cap ? cap * 2 : 1024;
        struct agg *bigger = realloc(aggs, cap * sizeof *aggs);
        if (!bigger) {
            fprintf(stderr, "profcheck: out of memory\n");
            exit(2);
        }
        aggs = bigger;
    }
    aggs[naggs] = (struct agg){ strdup(key), calls };
    table[j] = ++naggs;
}

static int bad(const char *file, const char *what, unsigned t, unsigned i)
{
    fprintf(stderr, "profcheck: %s: thread %u node %u: %s\n", file, t, i, what);
    return 1;
}

static int has_child(const struct prof_thread *th, uint32_t i)
{
    for (uint32_t j = i + 1; j < th->nnodes; j++)
        if (th->nodes[j].parent == i)
            return 1;
    return 0;
}

static int check(const char *file, const struct profile *p, unsigned long long *nodes,
                 unsigned long long *maxdepth)
{
    /* A time can't exceed the process's life (plus clock slack). */
    unsigned long long limit = p->process.duration_ns + 2000000000ull;
    char key[2048];
    for (uint32_t t = 0; t < p->nthreads; t++) {
        const struct prof_thread *th = &p->threads[t];
        unsigned long long *sum = calloc(th->nnodes + 1, sizeof *sum);
        uint32_t *depth = calloc(th->nnodes + 1, sizeof *depth);
        for (uint32_t i = 0; i < th->nnodes; i++) {
            const struct prof_node *n = &th->nodes[i];
            if (n->func >= p->nfuncs)
                return bad(file, "function out of range", t, i);
            if (n->parent != PROF_NONE && n->parent >= i)
                return bad(file, "parent after child", t, i);
            if (n->excl_ns > n->incl_ns)
                return bad(file, "exclusive time above inclusive", t, i);
            /* the "(merged)" thread (JPROFOPTS threads_kept) sums many
             * threads' times: only a real thread is bounded by the run */
            if (n->incl_ns > limit && th->index != UINT32_MAX)
                return bad(file, "inclusive time longer than the process ran", t, i);
            /* A node without calls is a context frame: a fork child's
             * inherited path (a chain from a root), or a frame opened again
             * above others (a coroutine resumed elsewhere), which has what
             * ran in it below. */
            if (n->calls == 0 && n->parent != PROF_NONE && th->nodes[n->parent].calls != 0 &&
                !has_child(th, i))
                return bad(file, "a node without calls", t, i);
            depth[i] = n->parent == PROF_NONE ? 1 : depth[n->parent] + 1;
            if (depth[i] > *maxdepth)
                *maxdepth = depth[i];
            if (n->parent != PROF_NONE)
                sum[n->parent] += n->incl_ns;
            const char *name = p->funcs[n->func].name;
            snprintf(key, sizeof key, "func %s", name);
            add(key, n->calls);
            snprintf(key, sizeof key, "edge %s\t%s",
                     n->parent == PROF_NONE ? "-" : p->funcs[th->nodes[n->parent].func].name, name);
            add(key, n->calls);
        }
        for (uint32_t i = 0; i < th->nnodes; i++)
            if (th->nodes[i].incl_ns < sum[i])
                return bad(file, "inclusive time below the children's sum", t, i);
        *nodes += th->nnodes;
        free(sum);
        free(depth);
    }
    return 0;
}

int main(int argc, char **argv)
{
    unsigned long long threads = 0, nodes = 0, maxdepth = 0;
    char err[1024];
    for (int i = 1; i < argc; i++) {
        struct profile *p = profile_read_file(argv[i], err, sizeof err);
        if (!p) {
            fprintf(stderr, "profcheck: %s\n", err);
            return 1;
        }
        if (check(argv[i], p, &nodes, &maxdepth))
            return 1;
        threads += p->nthreads;
        for (uint32_t m = 0; m < p->process.nmeta; m++) {
            const char *k = p->process.meta[m].key;
            if (!strcmp(k, "dropped_events") || !strcmp(k, "unmatched_exits")) {
                char key[64];
                snprintf(key, sizeof key, "meta %s", k);
                add(key, strtoull(p->process.meta[m].value, NULL, 10));
            }
        }
        profile_free(p);
    }
    printf("profiles %d\nthreads %llu\nnodes %llu\nmaxdepth %llu\n", argc - 1, threads, nodes,
           maxdepth);
    for (size_t i = 0; i < naggs; i++) {
        printf("%s\t%llu\n", aggs[i].key, aggs[i].calls);
    }
    return 0;
}
