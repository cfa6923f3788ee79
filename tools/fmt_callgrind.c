/*
 * hookit export --format=callgrind: the callgrind profile format, for
 * KCachegrind/QCachegrind and callgrind_annotate.
 *
 * Two events: Time_ns (time in ns) and Calls, and two more, Wait_ns (time
 * in blocking calls) and Cpu_ns (time on the CPU; tools/waittime.h), when
 * the profile has wait time.  A function's self cost is its exclusive
 * time, its number of calls, its wait and its CPU time, summed over every
 * calling context and thread; so the totals and
 * self costs equal `hookit report --flat`.  Each thread gets a synthetic caller "[thread N name]" that calls
 * the thread's roots, so every function has callers.
 *
 * Inclusive costs: callgrind_annotate --inclusive=yes and KCachegrind take
 * a function's inclusive cost as the sum of the costs on the calls= lines
 * that call it.  A call whose callee is already active further up the path
 * (recursion, direct or through other functions) therefore carries a cost
 * of 0 (its call count is kept): its time is already inside the outer
 * activation's cost.  This is the recursion rule of docs/reports.md.
 */
#include "profile/u64map.h"
#include "tools/cli.h"
#include "tools/export_opts.h"
#include "tools/tree.h"
#include "profile/waittime.h"

#include <stdlib.h>
#include <string.h>

struct edge {
    uint32_t caller, callee;    /* caller >= nfuncs: a thread's synthetic root */
    uint64_t count, incl_ns, incl_calls, incl_wait, incl_cpu;
};

struct cg {
    const struct profile *p;
    uint64_t *self_ns, *self_calls;
    uint32_t *active;
    uint64_t *subtree_calls;    /* per node of the current thread */
    uint64_t *self_wait;        /* Wait_ns, per function */
    uint64_t *subtree_wait;     /* per node of the current thread */
    uint64_t *self_cpu;         /* Cpu_ns, per function */
    uint64_t *subtree_cpu;      /* per node of the current thread */
    struct waittime wt;         /* the current thread's wait column */
    int waits;                  /* some thread has wait time: Wait_ns and Cpu_ns */
    struct edge *edges;
    uint32_t nedges, cap;
    struct u64map edge_map;     /* (caller << 32 | callee) + 1 -> edge */
    uint32_t root;              /* the current thread's synthetic caller */
    int failed;
};

static struct edge *edge_for(struct cg *c, uint32_t caller, uint32_t callee)
{
    if (u64map_room(&c->edge_map) != 0)
        return NULL;
    uint64_t key = ((uint64_t)caller << 32 | callee) + 1;
    size_t j = u64map_slot(&c->edge_map, key);
    if (c->edge_map.keys[j])
        return &c->edges[c->edge_map.vals[j]];
    if (c->nedges == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 256;
        struct edge *e = realloc(c->edges, (size_t)cap * sizeof *e);
        if (!e)
            return NULL;
        c->edges = e;
        c->cap = cap;
    }
    u64map_put(&c->edge_map, j, key, c->nedges);
    c->edges[c->nedges] = (struct edge){ caller, callee, 0, 0, 0, 0, 0 };
    return &c->edges[c->nedges++];
}

static void visit_pre(const struct tree *t, uint32_t node, void *vctx)
{
    struct cg *c = vctx;
    const struct prof_node *n = &t->thread->nodes[node];
    uint32_t caller = n->parent == PROF_NONE ? c->root : t->thread->nodes[n->parent].func;
    struct edge *e = edge_for(c, caller, n->func);
    if (!e) {
        c->failed = 1;
        return;
    }
    e->count += n->calls;
    if (c->active[n->func]++ == 0) {    /* the outermost activation carries the cost */
        e->incl_ns += n->incl_ns;
        e->incl_calls += c->subtree_calls[node];
        e->incl_wait += c->subtree_wait[node];
        e->incl_cpu += c->subtree_cpu[node];
    }
    c->self_wait[n->func] += waittime_wait(&c->wt, node);
    c->self_cpu[n->func] += waittime_cpu(&c->wt, t->thread, node);
    c->self_ns[n->func] += n->excl_ns;
    c->self_calls[n->func] += n->calls;
}

static void visit_post(const struct tree *t, uint32_t node, void *vctx)
{
    struct cg *c = vctx;
    c->active[t->thread->nodes[node].func]--;
}

static int add_thread(struct cg *c, const struct prof_thread *th, uint32_t root)
{
    struct tree t;
    if (tree_build(&t, c->p, th) != 0)
        return -1;
    c->subtree_calls = calloc((size_t)th->nnodes + 1, sizeof *c->subtree_calls);
    c->subtree_wait = waittime_subtree(th, WEIGHT_WAIT);
    c->subtree_cpu = waittime_subtree(th, WEIGHT_CPU);
    waittime_of(th, &c->wt);
    int rc = c->subtree_calls && c->subtree_wait && c->subtree_cpu ? 0 : -1;
    for (uint32_t i = th->nnodes; rc == 0 && i-- > 0;) {
        c->subtree_calls[i] += th->nodes[i].calls;
        if (th->nodes[i].parent != PROF_NONE)
            c->subtree_calls[th->nodes[i].parent] += c->subtree_calls[i];
    }
    c->root = root;
    if (rc == 0)
        rc = tree_walk(&t, visit_pre, visit_post, c);
    free(c->subtree_calls);
    free(c->subtree_wait);
    free(c->subtree_cpu);
    tree_free(&t);
    return rc || c->failed ? -1 : 0;
}

/* ---- writing, with callgrind's name compression ------------------------------ */

struct names {
    const char **keys;          /* open addressing by content: id = vals[i] */
    uint32_t *vals;
    uint32_t n, cap;            /* cap: a power of two, or 0 */
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int names_grow(struct names *ns)
{
    uint32_t cap = ns->cap ? ns->cap * 2 : 256;
    const char **keys = calloc(cap, sizeof *keys);
    uint32_t *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (uint32_t i = 0; i < ns->cap; i++) {
        if (!ns->keys[i])
            continue;
        uint32_t j = (uint32_t)hash_str(ns->keys[i]) & (cap - 1);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = ns->keys[i];
        vals[j] = ns->vals[i];
    }
    free(ns->keys);
    free(ns->vals);
    ns->keys = keys;
    ns->vals = vals;
    ns->cap = cap;
    return 0;
}

/* Print "(id) name" the first time a name is seen, "(id)" afterwards:
 * callgrind's name compression. */
static void put_name(FILE *out, struct names *ns, const char *s)
{
    if ((ns->n + 1) * 2 > ns->cap && names_grow(ns) != 0) {
        fprintf(out, "%s\n", s);  /* no compression then: the full name is always valid */
        return;
    }
    uint32_t j = (uint32_t)hash_str(s) & (ns->cap - 1);
    while (ns->keys[j] && strcmp(ns->keys[j], s))
        j = (j + 1) & (ns->cap - 1);
    if (ns->keys[j]) {
        fprintf(out, "(%u)\n", ns->vals[j]);
        return;
    }
    ns->keys[j] = s;
    ns->vals[j] = ++ns->n;
    fprintf(out, "(%u) ", ns->n);
    for (const char *q = s; *q; q++)  /* one line per name */
        fputc(*q == '\n' || *q == '\r' ? ' ' : *q, out);
    fputc('\n', out);
}

struct writer {
    FILE *out;
    const struct profile *p;
    const char **root_names;    /* per thread, interned */
    const char *unknown_file, *exe_module;
    struct names ob, fl, fn;
};

static const char *name_of(struct writer *w, uint32_t f)
{
    return f < w->p->nfuncs ? w->p->funcs[f].name : w->root_names[f - w->p->nfuncs];
}

static const char *module_of(struct writer *w, uint32_t f)
{
    const char *m = f < w->p->nfuncs ? w->p->funcs[f].module : NULL;
    return m && *m ? m : w->exe_module;
}

static const char *file_of(struct writer *w, uint32_t f)
{
    const char *file = f < w->p->nfuncs ? w->p->funcs[f].file : NULL;
    return file && *file ? file : w->unknown_file;
}

static uint32_t line_of(struct writer *w, uint32_t f)
{
    return f < w->p->nfuncs ? w->p->funcs[f].line : 0;
}

static int by_caller(const void *a, const void *b)
{
    const struct edge *x = a, *y = b;
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    return (x->callee > y->callee) - (x->callee < y->callee);
}

static void write_function(struct writer *w, struct cg *c, uint32_t f, struct edge *e, uint32_t ne)
{
    FILE *out = w->out;
    fputs("ob=", out);
    put_name(out, &w->ob, module_of(w, f));
    fputs("fl=", out);
    put_name(out, &w->fl, file_of(w, f));
    fputs("fn=", out);
    put_name(out, &w->fn, name_of(w, f));
    uint64_t self_ns = f < w->p->nfuncs ? c->self_ns[f] : 0;
    uint64_t self_calls = f < w->p->nfuncs ? c->self_calls[f] : 0;
    fprintf(out, "%u %llu %llu", line_of(w, f), (unsigned long long)self_ns,
            (unsigned long long)self_calls);
    if (c->waits)
        fprintf(out, " %llu %llu", (unsigned long long)(f < w->p->nfuncs ? c->self_wait[f] : 0),
                (unsigned long long)(f < w->p->nfuncs ? c->self_cpu[f] : 0));
    fputc('\n', out);
    for (uint32_t i = 0; i < ne; i++) {
        uint32_t g = e[i].callee;
        fputs("cob=", out);
        put_name(out, &w->ob, module_of(w, g));
        fputs("cfi=", out);
        put_name(out, &w->fl, file_of(w, g));
        fputs("cfn=", out);
        put_name(out, &w->fn, name_of(w, g));
        fprintf(out, "calls=%llu %u\n", (unsigned long long)e[i].count, line_of(w, g));
        fprintf(out, "%u %llu %llu", line_of(w, f), (unsigned long long)e[i].incl_ns,
                (unsigned long long)e[i].incl_calls);
        if (c->waits)
            fprintf(out, " %llu %llu", (unsigned long long)e[i].incl_wait, (unsigned long long)e[i].incl_cpu);
        fputc('\n', out);
    }
    fputc('\n', out);
}

static void write_header(FILE *out, const struct profile *p, uint64_t total_ns, uint64_t total_calls,
                         const uint64_t *total_wait, uint64_t total_cpu)
{
    fprintf(out, "# callgrind format\nversion: 1\ncreator: hookit %s\n", HOOKIT_VERSION);
    fprintf(out, "pid: %d\ncmd:", p->process.pid);
    if (p->process.argc == 0 && p->process.exe)
        fprintf(out, " %s", p->process.exe);
    for (uint32_t i = 0; i < p->process.argc; i++) {
        fputc(' ', out);
        for (const char *q = p->process.argv[i]; q && *q; q++)
            fputc(*q == '\n' || *q == '\r' ? ' ' : *q, out);
    }
    fputs("\npart: 1\npositions: line\n", out);
    fputs("event: Time_ns : Time (ns)\nevent: Calls : Calls\n", out);
    if (total_wait)
        fputs("event: Wait_ns : Wait in blocking calls (ns)\n"
              "event: Cpu_ns : Time on the CPU (ns)\n"
              "events: Time_ns Calls Wait_ns Cpu_ns\n",
              out);
    else
        fputs("events: Time_ns Calls\n", out);
    for (int k = 0; k < 2; k++) {
        fprintf(out, "%s: %llu %llu", k ? "totals" : "summary", (unsigned long long)total_ns,
                (unsigned long long)total_calls);
        if (total_wait)
            fprintf(out, " %llu %llu", (unsigned long long)*total_wait, (unsigned long long)total_cpu);
        fputc('\n', out);
    }
    fputc('\n', out);
}

static int write_profile(FILE *out, const struct profile *p)
{
    struct cg c = { .p = p };
    size_t nf = p->nfuncs ? p->nfuncs : 1;
    c.self_ns = calloc(nf, sizeof *c.self_ns);
    c.self_calls = calloc(nf, sizeof *c.self_calls);
    c.active = calloc(nf, sizeof *c.active);
    c.self_wait = calloc(nf, sizeof *c.self_wait);
    c.self_cpu = calloc(nf, sizeof *c.self_cpu);
    for (uint32_t k = 0; k < p->nthreads && !c.waits; k++)
        c.waits = waittime_of(&p->threads[k], &c.wt);
    struct writer w = { .out = out, .p = p };
    w.root_names = calloc(p->nthreads + 1, sizeof *w.root_names);
    struct profile *strings = profile_new();
    int rc = c.self_ns && c.self_calls && c.active && c.self_wait && c.self_cpu && w.root_names && strings
        ? 0
        : -1;
    for (uint32_t k = 0; rc == 0 && k < p->nthreads; k++) {
        char name[128];
        const struct prof_thread *th = &p->threads[k];
        snprintf(name, sizeof name, "[thread %u%s%.60s]", th->index,
                 th->name && *th->name ? " " : "", th->name ? th->name : "");
        rc = (w.root_names[k] = profile_intern(strings, name)) ? 0 : -1;
        if (rc == 0)
            rc = add_thread(&c, th, p->nfuncs + k);
    }
    if (rc == 0) {
        const char *exe = p->process.exe ? strrchr(p->process.exe, '/') : NULL;
        exe = exe ? exe + 1 : (p->process.exe ? p->process.exe : "");
        w.exe_module = profile_intern(strings, *exe ? exe : "[hookit]");
        w.unknown_file = profile_intern(strings, "???");
        rc = w.exe_module && w.unknown_file ? 0 : -1;
    }
    if (rc == 0) {
        uint64_t total_ns = 0, total_calls = 0, total_wait = 0, total_cpu = 0;
        for (uint32_t f = 0; f < p->nfuncs; f++) {
            total_ns += c.self_ns[f];
            total_calls += c.self_calls[f];
            total_wait += c.self_wait[f];
            total_cpu += c.self_cpu[f];
        }
        write_header(out, p, total_ns, total_calls, c.waits ? &total_wait : NULL, total_cpu);
        qsort(c.edges, c.nedges, sizeof *c.edges, by_caller);
        uint32_t e = 0;
        for (uint32_t f = 0; f < p->nfuncs + p->nthreads; f++) {
            uint32_t first = e;
            while (e < c.nedges && c.edges[e].caller == f)
                e++;
            int used = f >= p->nfuncs || c.self_calls[f] || e > first;
            if (used)
                write_function(&w, &c, f, c.edges + first, e - first);
        }
    } else {
        cli_fail("out of memory");
    }
    free(c.self_ns);
    free(c.self_calls);
    free(c.active);
    free(c.self_wait);
    free(c.self_cpu);
    free(c.edges);
    u64map_free(&c.edge_map);
    free(w.root_names);
    free(w.ob.keys);
    free(w.ob.vals);
    free(w.fl.keys);
    free(w.fl.vals);
    free(w.fn.keys);
    free(w.fn.vals);
    profile_free(strings);
    return rc;
}

int export_callgrind(FILE *out, struct loaded_profile *profiles, size_t n)
{
    int owned;
    struct profile *p = export_select(profiles, n, &owned);
    if (!p)
        return -1;
    int rc = write_profile(out, p);
    if (owned)
        profile_free(p);
    return rc;
}
