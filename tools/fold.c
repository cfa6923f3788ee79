/*
 * report --collapse-recursion on the tree: a chain of direct recursion
 * (fib -> fib -> fib) folded into one node, as KCachegrind folds a cycle.
 * The folded node has the chain's calls and exclusive time added up and
 * the inclusive time of its outermost activation (which contains the
 * others), so every total stays exact; the children of the folded levels
 * are merged by function (their times are disjoint, so they add up).
 *
 * --fold-frames: frames of functions that only pass a call on (the
 * standard library's thread and invoke wrappers) folded into their
 * caller the same way: the caller takes their own time and metrics, their
 * callees become the caller's (merged by function), their calls are not
 * the caller's and are dropped.  A folded root (a thread's entry wrapper)
 * leaves its callees as roots; its own time, a few ns, leaves the view.
 */
#include "tools/fold.h"
#include "tools/find_fn.h"
#include "tools/names.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* Globs on the simple name (tools/names.h): std::thread's state and
 * invoker, std::__invoke and its helpers, std::function's handler, the
 * wrappers every thread and callback starts with in libstdc++ and libc++. */
static const char *const default_patterns[] = {
    "std::thread::_State_impl::_M_run",
    "std::thread::_Invoker::*",
    "std::__invoke",
    "std::__invoke_impl",
    "std::__invoke_r",
    "std::invoke",
    "std::_Function_handler::_M_invoke",
    "std::function::operator()",
    "std::__1::__thread_proxy",
    "std::__1::__invoke",
    "std::__1::__thread_execute",
};
#define MAX_PATTERNS 64
static const char *patterns[MAX_PATTERNS];
static size_t npatterns;
static int defaults_off;

int fold_frames_add(const char *pattern)
{
    if (npatterns == MAX_PATTERNS)
        return -1;
    patterns[npatterns++] = pattern;
    return 0;
}

void fold_frames_off(void)
{
    defaults_off = 1;
    npatterns = 0;
}

static int default_folded(const char *name)
{
    char *simple = names_simple(name);
    const char *s = simple ? simple : name;
    int hit = 0;
    for (size_t i = 0; !defaults_off && !hit && i < sizeof default_patterns / sizeof *default_patterns; i++)
        hit = !fnmatch(default_patterns[i], s, 0);
    free(simple);
    return hit;
}

int fold_frames_check(const struct profile *const *ps, size_t n, const char *where)
{
    for (size_t i = 0; i < npatterns; i++)
        if (find_fn_check(ps, n, patterns[i], "--fold-frames: ", where) != 0)
            return -1;
    return 0;
}

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

/* hide: per function, fold its frames into their callers (NULL: none);
 * hide_node: the same per node, when non-zero (NULL: none); recursion:
 * fold direct recursion too. */
static int fold_thread(struct profile *p, struct prof_thread *th, const uint8_t *hide,
                       const uint64_t *hide_node, int recursion)
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
        if ((hide && hide[src->func]) || (hide_node && hide_node[i])) {
            map[i] = parent; /* its callees are its caller's (or roots) */
            if (parent == PROF_NONE)
                continue;
            out[parent].excl_ns += src->excl_ns;
            for (uint32_t m = 0; m < th->nmetrics; m++)
                cols[m][parent] += th->metrics[m].values[i];
            continue;
        }
        if (recursion && parent != PROF_NONE && out[parent].func == src->func) {
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
        if (fold_thread(p, &p->threads[t], NULL, NULL, 1) != 0)
            return -1;
    return 0;
}

static int as_compiled;

void fold_frames_as_compiled(void)
{
    as_compiled = 1;
}

int fold_frames(struct profile *p)
{
    if (as_compiled && fold_inlined(p) == UINT32_MAX)
        return -1;
    if (defaults_off && !npatterns)
        return 0;
    uint8_t *hide = calloc(p->nfuncs + 1, 1);
    if (!hide)
        return -1;
    uint8_t *named = calloc(p->nfuncs + 1, 1);
    int any = 0;
    for (uint32_t f = 0; named && f < p->nfuncs; f++)
        any |= hide[f] = (uint8_t)default_folded(p->funcs[f].name ? p->funcs[f].name : "");
    /* the user's: found as --callers finds a function (a name, a glob, a suffix) */
    for (size_t i = 0; named && i < npatterns; i++)
        if (find_fn(p, patterns[i], named) != FIND_NONE)
            for (uint32_t f = 0; f < p->nfuncs; f++)
                any |= hide[f] |= named[f];
    free(named);
    int rc = 0;
    for (uint32_t t = 0; any && rc == 0 && t < p->nthreads; t++)
        rc = fold_thread(p, &p->threads[t], hide, NULL, 0);
    free(hide);
    return rc;
}

uint32_t fold_inlined(struct profile *p)
{
    uint32_t folded = 0;
    for (uint32_t t = 0; t < p->nthreads; t++) {
        struct prof_thread *th = &p->threads[t];
        const struct prof_metric *m = profile_find_metric(th, "inlined");
        if (!m)
            continue;
        uint32_t n = th->nnodes;
        for (uint32_t i = 0; i < n; i++)
            folded += m->values[i] != 0 && th->nodes[i].parent != PROF_NONE;
        /* (the column is copied by the fold: read it before) */
        if (fold_thread(p, th, NULL, m->values, 0) != 0)
            return UINT32_MAX;
        /* the copies are gone: their hosts, which took their 1s, are not copies */
        m = profile_find_metric(th, "inlined");
        memset(m->values, 0, (size_t)th->nnodes * sizeof *m->values);
    }
    return folded;
}
