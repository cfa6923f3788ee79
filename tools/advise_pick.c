/* hookit advise: the functions, their cost and the top paths, and the
 * choice of what to drop (tools/advise.h). */
#include "tools/advise.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* A profile's synthetic names ("MPI:MPI_Send", "J:Main.main") are no
 * compiled function: a word, one colon, then the name. */
static int synthetic(const char *name)
{
    const char *c = strchr(name, ':');
    if (!c || c == name || c[1] == ':')
        return 0;
    for (const char *s = name; s < c; s++)
        if (!isalnum((unsigned char)*s))
            return 0;
    return 1;
}

/* The name GCC's exclude list is matched against, or a part of it: C's
 * identifier without the clone suffix GCC adds (foo.part.0, foo.isra.0);
 * C++'s unqualified name ("ns::A<int>::get(int) const" -> "get"), which
 * GCC's printable name ("A<int>::get") holds.  Malloc'd, or NULL. */
static char *gcc_key(const char *name)
{
    const char *end = name + strlen(name), *start = name;
    int depth = 0;
    for (const char *s = name; *s; s++) {
        if (*s == '<')
            depth++;
        else if (*s == '>' && depth > 0)
            depth--;
        else if (*s == '(' && depth == 0 && s > name) {
            end = s;
            break;
        }
    }
    depth = 0;
    for (const char *s = name; s < end; s++) {
        if (*s == '<')
            depth++;
        else if (*s == '>' && depth > 0)
            depth--;
        else if (depth == 0 && s[0] == ':' && s[1] == ':')
            start = s + 2;
    }
    const char *lt = memchr(start, '<', (size_t)(end - start));
    if (lt && strncmp(start, "operator", 8) != 0)
        end = lt; /* a template's arguments: GCC may write them otherwise */
    const char *dot = memchr(start, '.', (size_t)(end - start));
    if (dot && dot > start)
        end = dot;
    return strndup(start, (size_t)(end - start));
}

static int by_key(const void *a, const void *b, void *keys)
{
    char **k = keys;
    return strcmp(k[*(const uint32_t *)a], k[*(const uint32_t *)b]);
}

static int by_cost(const void *a, const void *b)
{
    double x = ((const struct advise_fn *)a)->cost_ns, y = ((const struct advise_fn *)b)->cost_ns;
    return x < y ? 1
        : x > y  ? -1
                 : strcmp(((const struct advise_fn *)a)->key, ((const struct advise_fn *)b)->key);
}

struct context {
    double incl_ns;
    uint32_t thread, node;
};

/* Each node's inclusive time without the hooks in it: under timer=exact
 * each call below a node put its hook pair's cost in the node's time, and
 * the node's own calls the part inside the callee; that would make the
 * hottest tiny function look like a top context for being costly.  Sampled
 * times hold none of it.  NULL when out of memory. */
static double *program_incl(const struct prof_thread *th, const struct run_cost *run)
{
    double *below = calloc((size_t)th->nnodes + 1, sizeof *below);
    if (!below)
        return NULL;
    for (uint32_t i = th->nnodes; i-- > 0;) { /* parents precede children */
        uint32_t parent = th->nodes[i].parent;
        if (parent != PROF_NONE && parent < i)
            below[parent] += below[i] + (double)th->nodes[i].calls;
    }
    for (uint32_t i = 0; i < th->nnodes; i++)
        below[i] = run->sampled ? (double)th->nodes[i].incl_ns
                                : (double)th->nodes[i].incl_ns - below[i] * run->ns_per_call
                - (double)th->nodes[i].calls * run->inner_ns;
    return below;
}

/* c into best[], the n largest so far (have of them), largest first. */
static void keep_best(struct context *best, uint32_t n, uint32_t *have, struct context c)
{
    uint32_t k = *have < n ? (*have)++ : n;
    if (k == n && (n == 0 || best[n - 1].incl_ns >= c.incl_ns))
        return;
    while (k > 0 && best[k - 1].incl_ns < c.incl_ns) {
        if (k < n)
            best[k] = best[k - 1];
        k--;
    }
    best[k] = c;
}

/* Mark in on_top[] every function on the paths to p's n calling contexts
 * with the most inclusive time (all threads).  Returns how many there
 * were, or -1 when out of memory. */
static int mark_top_paths(const struct profile *p, const struct run_cost *run, uint32_t n,
                          unsigned char *on_top)
{
    struct context *best = calloc(n + 1, sizeof *best);
    uint32_t have = 0;
    if (!best)
        return -1;
    for (uint32_t t = 0; t < p->nthreads; t++) {
        double *incl = program_incl(&p->threads[t], run);
        if (!incl) {
            free(best);
            return -1;
        }
        for (uint32_t i = 0; i < p->threads[t].nnodes; i++)
            keep_best(best, n, &have, (struct context){ incl[i], t, i });
        free(incl);
    }
    for (uint32_t b = 0; b < have; b++) {
        const struct prof_thread *th = &p->threads[best[b].thread];
        for (uint32_t i = best[b].node; i != PROF_NONE && i < th->nnodes; i = th->nodes[i].parent)
            on_top[th->nodes[i].func] = 1;
    }
    free(best);
    return (int)have;
}

/* One entry per key: its functions' calls summed, kept when any is on a
 * top path. */
static int group_by_key(const struct profile *p, char **keys, const uint64_t *calls,
                        const unsigned char *on_top, struct advise *a)
{
    uint32_t *order = malloc((p->nfuncs + 1) * sizeof *order), n = 0;
    a->fns = calloc(p->nfuncs + 1, sizeof *a->fns);
    if (!order || !a->fns) {
        free(order);
        return -1;
    }
    for (uint32_t f = 0; f < p->nfuncs; f++)
        if (keys[f])
            order[n++] = f;
    qsort_r(order, n, sizeof *order, by_key, keys);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t f = order[k];
        struct advise_fn *g = a->nfns ? &a->fns[a->nfns - 1] : NULL;
        if (!g || strcmp(g->key, keys[f]) != 0) {
            g = &a->fns[a->nfns++];
            g->key = keys[f];
            keys[f] = NULL; /* owned by the entry now */
            g->name = p->funcs[f].name;
        }
        if (!g->file)
            g->file = p->funcs[f].file;
        else if (p->funcs[f].file && strcmp(g->file, p->funcs[f].file) != 0)
            g->files_differ = 1;
        g->calls += calls[f];
        g->on_top_path |= on_top[f];
    }
    free(order);
    for (size_t i = 0; i < a->nfns; i++)
        a->fns[i].cost_ns = (double)a->fns[i].calls * a->run.ns_per_call;
    qsort(a->fns, a->nfns, sizeof *a->fns, by_cost);
    return 0;
}

int advise_collect(const struct profile *p, const struct advise_opts *o, struct advise *a)
{
    memset(a, 0, sizeof *a);
    if (cost_of_run(p, &a->run) != 0)
        return -1;
    uint64_t *calls = calloc(p->nfuncs + 1, sizeof *calls);
    unsigned char *on_top = calloc(p->nfuncs + 1, 1);
    char **keys = calloc(p->nfuncs + 1, sizeof *keys);
    int rc = calls && on_top && keys ? 0 : -2;
    for (uint32_t t = 0; !rc && t < p->nthreads; t++)
        for (uint32_t i = 0; i < p->threads[t].nnodes; i++)
            if (p->threads[t].nodes[i].func < p->nfuncs)
                calls[p->threads[t].nodes[i].func] += p->threads[t].nodes[i].calls;
    for (uint32_t f = 0; !rc && f < p->nfuncs; f++)
        if (calls[f] && p->funcs[f].name && !synthetic(p->funcs[f].name)
            && !(keys[f] = gcc_key(p->funcs[f].name)))
            rc = -2;
    if (!rc) {
        int top = mark_top_paths(p, &a->run, o->top_contexts, on_top);
        a->top_contexts = top > 0 ? (uint32_t)top : 0;
        if (top < 0 || group_by_key(p, keys, calls, on_top, a) != 0)
            rc = -2;
    }
    double program_ns = a->run.run_ns - a->run.cost_ns;
    a->target_ns = o->target_pct / 100 * (program_ns > 0 ? program_ns : 0);
    for (uint32_t f = 0; keys && f < p->nfuncs; f++)
        free(keys[f]);
    free(keys);
    free(on_top);
    free(calls);
    if (rc)
        advise_free(a);
    return rc;
}

static double cost_left(const struct advise *a)
{
    double left = 0;
    for (size_t i = 0; i < a->nfns; i++)
        if (a->fns[i].how == ADVISE_KEEP)
            left += a->fns[i].cost_ns;
    return left;
}

/* Under a ten-thousandth of the run a function is not worth its counts. */
#define ADVISE_NOT_WORTH 0.0001

int advise_choose(struct advise *a)
{
    double left = cost_left(a);
    for (size_t i = 0; i < a->nfns && left > a->target_ns; i++) {
        struct advise_fn *f = &a->fns[i];
        if (f->cost_ns < ADVISE_NOT_WORTH * a->run.run_ns)
            break;
        if (f->how != ADVISE_KEEP || f->on_top_path)
            continue;
        if (advise_try_drop(a, i))
            left = cost_left(a);
    }
    a->left_ns = left;
    a->ndropped = 0;
    a->calls_left = a->run.calls;
    for (size_t i = 0; i < a->nfns; i++)
        if (a->fns[i].how != ADVISE_KEEP) {
            a->ndropped++;
            a->calls_left -= a->fns[i].calls;
        }
    return 0;
}

void advise_free(struct advise *a)
{
    for (size_t i = 0; a->fns && i < a->nfns; i++)
        free(a->fns[i].key);
    free(a->fns);
    a->fns = NULL;
    a->nfns = 0;
}
