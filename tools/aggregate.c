#include "tools/aggregate.h"
#include "profile/u64map.h"
#include "tools/waittime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct anode {
    uint32_t func, parent;      /* parent: anode index or PROF_NONE */
    uint64_t calls, incl, excl; /* sums over inputs */
    /* the input being folded (summed over its threads when they merge) */
    uint32_t cur_input;
    int has_cur, seen;
    uint64_t cur_calls, cur_incl, cur_excl;
    /* over committed inputs */
    uint32_t present, last_seen, first_absent;
    uint64_t min_calls, max_calls, min_incl, max_incl, min_excl, max_excl;
    uint32_t min_incl_in, max_incl_in;
    uint64_t *per_input;        /* AGG_PER_INPUT: PER_INPUT values per input */
    uint64_t msum[AGG_MAX_SUMS];/* AGG_STATS: the inputs' own metric columns, summed */
};

struct athread {
    uint32_t index;
    int32_t tid;
    const char *name;
    struct anode *nodes;
    uint32_t n, cap;
    struct u64map node_map;     /* (parent + 1) << 32 | func, bit 63 set -> node */
    uint32_t *order;            /* after agg_finish: output node -> anode */
};

struct agg {
    int flags;
    uint32_t ninputs, per_input_n;
    struct profile *out;        /* strings and the process of the result */
    struct prof_func *funcs;
    uint32_t nfuncs, func_cap;
    struct u64map func_map;     /* hash of the interned (name, module) -> function;
                                 * equal hashes are told apart by the pointers */
    struct athread *threads;
    uint32_t nthreads, thread_cap;
    const char *sum_names[AGG_MAX_SUMS]; /* metric columns of the inputs, summed (interned) */
    uint32_t nsums;
    int head_ran;               /* the process heading the result ran instrumented code */
};

/* AGG_PER_INPUT: calls, incl, excl, wait, cpu of each input */
#define PER_INPUT 5

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

struct agg *agg_new(int flags, uint32_t ninputs_hint)
{
    struct agg *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->flags = flags;
    a->per_input_n = (flags & AGG_PER_INPUT) ? ninputs_hint : 0;
    a->out = profile_new();
    if (!a->out) {
        agg_free(a);
        return NULL;
    }
    return a;
}

void agg_free(struct agg *a)
{
    if (!a)
        return;
    for (uint32_t t = 0; t < a->nthreads; t++) {
        struct athread *th = &a->threads[t];
        for (uint32_t i = 0; i < th->n; i++)
            free(th->nodes[i].per_input);
        free(th->nodes);
        u64map_free(&th->node_map);
        free(th->order);
    }
    free(a->threads);
    free(a->funcs);
    u64map_free(&a->func_map);
    profile_free(a->out);
    free(a);
}

/* ---- functions, matched by (name, module) ------------------------------------ */

/* The result's index of the function f of an input, added when new. */
static uint32_t func_of(struct agg *a, const struct prof_func *f)
{
    const char *name = profile_intern(a->out, f->name ? f->name : "?");
    const char *module = profile_intern(a->out, f->module ? f->module : "");
    if (!name || !module)
        return PROF_NONE;
    struct u64map *m = &a->func_map;
    if (u64map_room(m) != 0)
        return PROF_NONE;
    uint64_t key = mix((uint64_t)(uintptr_t)name) ^ (uint64_t)(uintptr_t)module * 31;
    key |= 1;
    size_t j = u64map_home(m, key);
    for (; m->keys[j]; j = u64map_next(m, j)) {
        if (m->keys[j] == key) {
            const struct prof_func *g = &a->funcs[m->vals[j]];
            if (g->name == name && g->module == module)
                return m->vals[j];
        }
    }
    if (a->nfuncs == a->func_cap) {
        uint32_t cap = a->func_cap ? a->func_cap * 2 : 256;
        struct prof_func *fs = realloc(a->funcs, (size_t)cap * sizeof *fs);
        if (!fs)
            return PROF_NONE;
        a->funcs = fs;
        a->func_cap = cap;
    }
    struct prof_func *g = &a->funcs[a->nfuncs];
    g->addr = f->addr;
    g->name = name;
    g->module = module;
    g->file = f->file ? profile_intern(a->out, f->file) : NULL;
    g->line = f->line;
    u64map_put(m, j, key, a->nfuncs);
    return a->nfuncs++;
}

/* ---- nodes, matched by (parent, function) --------------------------------------- */

static uint32_t node_of(struct agg *a, struct athread *t, uint32_t parent, uint32_t func)
{
    if (u64map_room(&t->node_map) != 0)
        return PROF_NONE;
    uint64_t key = (1ull << 63) | (uint64_t)(parent == PROF_NONE ? 0 : parent + 1) << 32 | func;
    size_t j = u64map_slot(&t->node_map, key);
    if (t->node_map.keys[j])
        return t->node_map.vals[j];
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 256;
        struct anode *ns = realloc(t->nodes, (size_t)cap * sizeof *ns);
        if (!ns)
            return PROF_NONE;
        t->nodes = ns;
        t->cap = cap;
    }
    struct anode *n = &t->nodes[t->n];
    memset(n, 0, sizeof *n);
    n->func = func;
    n->parent = parent;
    n->first_absent = UINT32_MAX;
    if (a->per_input_n && !(n->per_input = calloc((size_t)a->per_input_n * PER_INPUT, sizeof(uint64_t))))
        return PROF_NONE;
    u64map_put(&t->node_map, j, key, t->n);
    return t->n++;
}

/* The numbers of the input folded last become part of min/max. */
static void commit(struct anode *n)
{
    if (!n->has_cur)
        return;
    uint32_t i = n->cur_input;
    if (!n->seen && i > 0 && n->first_absent > 0)
        n->first_absent = 0;
    if (n->seen && i > n->last_seen + 1 && n->first_absent > n->last_seen + 1)
        n->first_absent = n->last_seen + 1;
    if (!n->present || n->cur_calls < n->min_calls)
        n->min_calls = n->cur_calls;
    if (!n->present || n->cur_calls > n->max_calls)
        n->max_calls = n->cur_calls;
    if (!n->present || n->cur_incl < n->min_incl) {
        n->min_incl = n->cur_incl;
        n->min_incl_in = i;
    }
    if (!n->present || n->cur_incl > n->max_incl) {
        n->max_incl = n->cur_incl;
        n->max_incl_in = i;
    }
    if (!n->present || n->cur_excl < n->min_excl)
        n->min_excl = n->cur_excl;
    if (!n->present || n->cur_excl > n->max_excl)
        n->max_excl = n->cur_excl;
    n->present++;
    n->seen = 1;
    n->last_seen = i;
    n->has_cur = 0;
}

static void fold(struct agg *a, struct anode *n, uint32_t input, const struct prof_node *src)
{
    if (n->has_cur && n->cur_input != input)
        commit(n);
    if (!n->has_cur) {
        n->has_cur = 1;
        n->cur_input = input;
        n->cur_calls = n->cur_incl = n->cur_excl = 0;
    }
    n->cur_calls += src->calls;
    n->cur_incl += src->incl_ns;
    n->cur_excl += src->excl_ns;
    n->calls += src->calls;
    n->incl += src->incl_ns;
    n->excl += src->excl_ns;
    if (input < a->per_input_n) {
        n->per_input[PER_INPUT * input] += src->calls;
        n->per_input[PER_INPUT * input + 1] += src->incl_ns;
        n->per_input[PER_INPUT * input + 2] += src->excl_ns;
    }
}

/* The time an input's node spent waiting and on the CPU (waittime.h), per
 * input for hookit diff. */
static void fold_split(struct agg *a, struct anode *n, uint32_t input, uint64_t wait, uint64_t cpu)
{
    if (input < a->per_input_n) {
        n->per_input[PER_INPUT * input + 3] += wait;
        n->per_input[PER_INPUT * input + 4] += cpu;
    }
}

/* Time waiting and on the CPU stay apart in every merge, statistics or
 * not (--merge-threads, report --merge, export of several profiles). */
static int split_metric(const char *name)
{
    return !strcmp(name, "wait_ns") || !strcmp(name, "cpu_ns") || !strcmp(name, "wait_calls");
}

/* A metric column of an input that is summed: one the profiler wrote
 * (mpi_bytes, io_bytes_read, ...), not one a merge derived. */
static int summed_metric(const char *name)
{
    static const char *const derived[] = { "inputs", "min_", "mean_", "max_", "imbalance" };
    for (size_t i = 0; i < sizeof derived / sizeof *derived; i++)
        if (!strncmp(name, derived[i], strlen(derived[i])))
            return 0;
    return 1;
}

/* Column c of src -> index into the sums, or -1 (not summed, or too many). */
static void sum_columns(struct agg *a, const struct prof_thread *src, int *idx)
{
    for (uint32_t c = 0; c < src->nmetrics; c++) {
        idx[c] = -1;
        const char *name = src->metrics[c].name;
        if (!name || !src->metrics[c].values || !summed_metric(name)
            || !((a->flags & AGG_STATS) || split_metric(name)))
            continue;
        const char *in = profile_intern(a->out, name);
        for (uint32_t k = 0; in && k < a->nsums && idx[c] < 0; k++)
            if (a->sum_names[k] == in)
                idx[c] = (int)k;
        if (in && idx[c] < 0 && a->nsums < AGG_MAX_SUMS) {
            a->sum_names[a->nsums] = in;
            idx[c] = (int)a->nsums++;
        }
    }
}

static struct athread *thread_for(struct agg *a, const struct prof_thread *src)
{
    uint32_t index = (a->flags & AGG_MERGE_THREADS) ? 0 : src->index;
    for (uint32_t i = 0; i < a->nthreads; i++)
        if (a->threads[i].index == index)
            return &a->threads[i];
    if (a->nthreads == a->thread_cap) {
        uint32_t cap = a->thread_cap ? a->thread_cap * 2 : 8;
        struct athread *ts = realloc(a->threads, (size_t)cap * sizeof *ts);
        if (!ts)
            return NULL;
        a->threads = ts;
        a->thread_cap = cap;
    }
    struct athread *t = &a->threads[a->nthreads++];
    memset(t, 0, sizeof *t);
    t->index = index;
    t->tid = src->tid;
    t->name = profile_intern(a->out, (a->flags & AGG_MERGE_THREADS) ? "all threads"
                                     : (src->name ? src->name : ""));
    return t->name ? t : NULL;
}

static int copy_process(struct agg *a, const struct profile *p)
{
    struct prof_process *d = &a->out->process;
    const struct prof_process *s = &p->process;
    d->pid = s->pid;
    d->ppid = s->ppid;
    d->rank = s->rank;
    d->size = s->size;
    d->start_ns = s->start_ns;
    d->duration_ns = s->duration_ns;
    d->exe = profile_intern(a->out, s->exe ? s->exe : "");
    d->argv = profile_alloc(a->out, ((size_t)s->argc + 1) * sizeof *d->argv);
    if (!d->exe || !d->argv)
        return -1;
    for (uint32_t i = 0; i < s->argc; i++)
        if (!(d->argv[i] = profile_intern(a->out, s->argv[i] ? s->argv[i] : "")))
            return -1;
    d->argc = s->argc;
    for (uint32_t i = 0; i < s->nmeta; i++)
        if (profile_set_meta(a->out, s->meta[i].key, s->meta[i].value) != 0)
            return -1;
    return 0;
}

/* Whether any instrumented function ran in p (a call on some node). */
static int ran_code(const struct profile *p)
{
    for (uint32_t t = 0; t < p->nthreads; t++)
        for (uint32_t i = 0; i < p->threads[t].nnodes; i++)
            if (p->threads[t].nodes[i].calls)
                return 1;
    return 0;
}

int agg_add(struct agg *a, const struct profile *p, const char *label)
{
    uint32_t input = a->ninputs++;
    /* The result is headed by the first input that ran the code: never by
     * a process (a shell of `sh -c`) that ran none of it. */
    int ran = ran_code(p);
    uint64_t longest = a->out->process.duration_ns;
    if ((input == 0 || (ran && !a->head_ran)) && copy_process(a, p) != 0)
        return -1;
    if (input > 0 && longest > a->out->process.duration_ns)
        a->out->process.duration_ns = longest;
    if (ran)
        a->head_ran = 1;
    if (input > 0 && p->process.duration_ns > a->out->process.duration_ns)
        a->out->process.duration_ns = p->process.duration_ns;
    if (label) {
        char key[32], value[1024];
        snprintf(key, sizeof key, "input.%u", input);
        snprintf(value, sizeof value, "%s pid %d rank %d", label, p->process.pid, p->process.rank);
        if (profile_set_meta(a->out, key, value) != 0)
            return -1;
    }
    uint32_t *fmap = malloc(((size_t)p->nfuncs + 1) * sizeof *fmap);
    if (!fmap)
        return -1;
    for (uint32_t f = 0; f < p->nfuncs; f++)
        if ((fmap[f] = func_of(a, &p->funcs[f])) == PROF_NONE) {
            free(fmap);
            return -1;
        }
    int rc = 0;
    for (uint32_t k = 0; k < p->nthreads && rc == 0; k++) {
        const struct prof_thread *src = &p->threads[k];
        struct athread *t = thread_for(a, src);
        uint32_t *map = malloc(((size_t)src->nnodes + 1) * sizeof *map);
        int *sums = malloc(((size_t)src->nmetrics + 1) * sizeof *sums);
        if (!t || !map || !sums) {
            free(map);
            free(sums);
            rc = -1;
            break;
        }
        sum_columns(a, src, sums);
        struct waittime w;
        waittime_of(src, &w);
        for (uint32_t i = 0; i < src->nnodes; i++) {
            const struct prof_node *sn = &src->nodes[i];
            uint32_t parent = PROF_NONE;
            if (sn->parent != PROF_NONE && sn->parent < i)
                parent = map[sn->parent];
            uint32_t func = sn->func < p->nfuncs ? fmap[sn->func] : PROF_NONE;
            uint32_t n = func == PROF_NONE ? PROF_NONE : node_of(a, t, parent, func);
            if (n == PROF_NONE) {
                rc = -1;
                break;
            }
            map[i] = n;
            fold(a, &t->nodes[n], input, sn);
            fold_split(a, &t->nodes[n], input, waittime_wait(&w, i), waittime_cpu(&w, src, i));
            for (uint32_t c = 0; c < src->nmetrics; c++)
                if (sums[c] >= 0)
                    t->nodes[n].msum[sums[c]] += src->metrics[c].values[i];
        }
        free(map);
        free(sums);
    }
    free(fmap);
    return rc;
}

/* Nodes in preorder (children in order of discovery) into th; t->order
 * keeps output index -> anode. */
static int emit_thread(struct agg *a, struct athread *t, struct prof_thread *th)
{
    uint32_t n = t->n;
    uint32_t *start = calloc((size_t)n + 2, sizeof *start);
    uint32_t *child = malloc(((size_t)n + 1) * sizeof *child);
    uint32_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
    uint32_t *stack = malloc(((size_t)n + 1) * sizeof *stack);
    uint32_t *newidx = malloc(((size_t)n + 1) * sizeof *newidx);
    t->order = malloc(((size_t)n + 1) * sizeof *t->order);
    th->nodes = profile_alloc(a->out, (size_t)n * sizeof *th->nodes + 1);
    int rc = start && child && fill && stack && newidx && t->order && th->nodes ? 0 : -1;
    if (rc == 0) {
        for (uint32_t i = 0; i < n; i++)
            start[(t->nodes[i].parent == PROF_NONE ? n : t->nodes[i].parent) + 1]++;
        for (uint32_t i = 0; i <= n; i++)
            start[i + 1] += start[i];
        memcpy(fill, start, ((size_t)n + 1) * sizeof *fill);
        for (uint32_t i = 0; i < n; i++)
            child[fill[t->nodes[i].parent == PROF_NONE ? n : t->nodes[i].parent]++] = i;
        uint32_t sp = 0, k = 0;
        for (uint32_t c = start[n + 1]; c-- > start[n];)
            stack[sp++] = child[c];
        while (sp > 0) {
            uint32_t v = stack[--sp];
            const struct anode *an = &t->nodes[v];
            newidx[v] = k;
            t->order[k] = v;
            th->nodes[k++] = (struct prof_node){
                .func = an->func,
                .parent = an->parent == PROF_NONE ? PROF_NONE : newidx[an->parent],
                .calls = an->calls, .incl_ns = an->incl, .excl_ns = an->excl,
            };
            for (uint32_t c = start[v + 1]; c-- > start[v];)
                stack[sp++] = child[c];
        }
        th->nnodes = k;
    }
    free(start);
    free(child);
    free(fill);
    free(stack);
    free(newidx);
    return rc;
}

enum { M_INPUTS, M_MIN_CALLS, M_MEAN_CALLS, M_MAX_CALLS, M_MIN_INCL, M_MEAN_INCL, M_MAX_INCL,
       M_MIN_INCL_IN, M_MAX_INCL_IN, M_MIN_EXCL, M_MEAN_EXCL, M_MAX_EXCL, NMETRICS };
static const char *const metric_names[NMETRICS] = {
    "inputs", "min_calls", "mean_calls", "max_calls", "min_incl_ns", "mean_incl_ns",
    "max_incl_ns", "min_incl_input", "max_incl_input", "min_excl_ns", "mean_excl_ns",
    "max_excl_ns",
};

/* The metric columns: with AGG_STATS the statistics and the summed
 * columns, else the summed columns only (wait_ns, cpu_ns, wait_calls). */
static int emit_stats(struct agg *a, struct athread *t, struct prof_thread *th)
{
    int stats = (a->flags & AGG_STATS) != 0;
    uint32_t first = stats ? 0 : NMETRICS; /* skip the statistics */
    uint32_t ncols = NMETRICS + a->nsums - first;
    if (ncols == 0)
        return 0;
    th->metrics = profile_alloc(a->out, ncols * sizeof *th->metrics);
    if (!th->metrics)
        return -1;
    for (uint32_t m = 0; m < ncols; m++) {
        uint32_t col = m + first;
        th->metrics[m].name =
            col < NMETRICS ? profile_intern(a->out, metric_names[col]) : a->sum_names[col - NMETRICS];
        th->metrics[m].values = profile_alloc(a->out, (size_t)th->nnodes * sizeof(uint64_t) + 1);
        if (!th->metrics[m].name || !th->metrics[m].values)
            return -1;
    }
    th->nmetrics = ncols;
    uint64_t n_in = a->ninputs ? a->ninputs : 1;
    for (uint32_t k = 0; k < th->nnodes; k++) {
        struct anode *an = &t->nodes[t->order[k]];
        uint64_t v[NMETRICS];
        if (an->seen && an->last_seen + 1 < a->ninputs && an->first_absent > an->last_seen + 1)
            an->first_absent = an->last_seen + 1;
        int absent = an->present < a->ninputs;
        v[M_INPUTS] = an->present;
        v[M_MIN_CALLS] = absent ? 0 : an->min_calls;
        v[M_MAX_CALLS] = an->max_calls;
        v[M_MEAN_CALLS] = an->calls / n_in;
        v[M_MIN_INCL] = absent ? 0 : an->min_incl;
        v[M_MAX_INCL] = an->max_incl;
        v[M_MEAN_INCL] = an->incl / n_in;
        v[M_MIN_INCL_IN] = absent ? an->first_absent : an->min_incl_in;
        v[M_MAX_INCL_IN] = an->max_incl_in;
        v[M_MIN_EXCL] = absent ? 0 : an->min_excl;
        v[M_MAX_EXCL] = an->max_excl;
        v[M_MEAN_EXCL] = an->excl / n_in;
        for (int m = 0; m < NMETRICS && stats; m++)
            th->metrics[m].values[k] = v[m];
        for (uint32_t m = 0; m < a->nsums; m++)
            th->metrics[NMETRICS - first + m].values[k] = an->msum[m];
    }
    return 0;
}

static int by_index(const void *x, const void *y)
{
    const struct athread *a = x, *b = y;
    return (a->index > b->index) - (a->index < b->index);
}

struct profile *agg_finish(struct agg *a)
{
    struct profile *p = a->out;
    p->funcs = profile_alloc(p, (size_t)a->nfuncs * sizeof *p->funcs + 1);
    p->threads = profile_alloc(p, (size_t)a->nthreads * sizeof *p->threads + 1);
    if (!p->funcs || !p->threads)
        return NULL;
    memcpy(p->funcs, a->funcs, (size_t)a->nfuncs * sizeof *p->funcs);
    p->nfuncs = a->nfuncs;
    qsort(a->threads, a->nthreads, sizeof *a->threads, by_index);
    char buf[32];
    snprintf(buf, sizeof buf, "%u", a->ninputs);
    if (a->ninputs > 1 && (profile_set_meta(p, "merged_inputs", buf) != 0 ||
                           profile_set_meta(p, "source", "merge") != 0))
        return NULL;
    for (uint32_t k = 0; k < a->nthreads; k++) {
        struct athread *t = &a->threads[k];
        struct prof_thread *th = &p->threads[k];
        memset(th, 0, sizeof *th);
        th->tid = t->tid;
        th->index = t->index;
        th->name = t->name;
        for (uint32_t i = 0; i < t->n; i++)
            commit(&t->nodes[i]);
        if (emit_thread(a, t, th) != 0)
            return NULL;
        if (emit_stats(a, t, th) != 0)
            return NULL;
    }
    p->nthreads = a->nthreads;
    a->out = NULL;              /* the caller owns it now */
    /* keep a pointer-free shell so agg_value still works */
    return p;
}

struct agg_values agg_value(const struct agg *a, uint32_t thread, uint32_t node, uint32_t input)
{
    struct agg_values v = { 0, 0, 0, 0, 0 };
    if (thread >= a->nthreads || input >= a->per_input_n)
        return v;
    const struct athread *t = &a->threads[thread];
    if (!t->order || node >= t->n)
        return v;
    const uint64_t *pi = t->nodes[t->order[node]].per_input;
    v.calls = pi[PER_INPUT * input];
    v.incl_ns = pi[PER_INPUT * input + 1];
    v.excl_ns = pi[PER_INPUT * input + 2];
    v.wait_ns = pi[PER_INPUT * input + 3];
    v.cpu_ns = pi[PER_INPUT * input + 4];
    return v;
}

struct profile *agg_merge_threads(const struct profile *p)
{
    struct agg *a = agg_new(AGG_MERGE_THREADS, 1);
    struct profile *out = a && agg_add(a, p, NULL) == 0 ? agg_finish(a) : NULL;
    agg_free(a);
    return out;
}
