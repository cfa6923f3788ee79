#include "profile/aggregate.h"
#include "profile/u64map.h"
#include "profile/waittime.h"

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
    uint64_t *per_input;         /* AGG_PER_INPUT: PER_INPUT values per input */
    uint64_t msum[AGG_MAX_SUMS]; /* AGG_STATS: the inputs' own metric columns, summed */
};

struct athread {
    uint32_t index;
    int32_t tid;
    const char *name;
    struct anode *nodes;
    uint32_t n, cap;
    struct u64map node_map; /* (parent + 1) << 32 | func, bit 63 set -> node */
    uint32_t *order;        /* after agg_finish: output node -> anode */
};

struct agg {
    int flags;
    uint32_t ninputs, per_input_n;
    struct profile *out; /* strings and the process of the result */
    struct prof_func *funcs;
    uint32_t nfuncs, func_cap;
    struct u64map func_map; /* hash of the interned (name, module) -> function;
                                 * equal hashes are told apart by the pointers */
    struct athread *threads;
    uint32_t nthreads, thread_cap;
    const char *sum_names[AGG_MAX_SUMS]; /* metric columns of the inputs, summed (interned) */
    uint32_t nsums;
    int head_ran; /* the process heading the result ran instrumented code */
    /* The metadata, composed at the end as one input after the other would
     * have left it (agg_finish): input 0's, then the head's (the first
     * input that ran code) laid over it, with the labels in between. */
    const struct prof_meta *first_meta, *head_meta; /* interned in out */
    uint32_t nfirst, nhead, head_input;
    struct agg_label *labels;
    uint32_t nlabels, label_cap;
};

/* input.N = "LABEL pid P rank R" of an input (interned in out). */
struct agg_label {
    uint32_t input;
    const char *text;
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
    free(a->labels);
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
    static const char *const derived[] = { "inputs", "min_", "mean_", "max_", "imbalance", "partial:" };
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
    t->name =
        profile_intern(a->out, (a->flags & AGG_MERGE_THREADS) ? "all threads" : (src->name ? src->name : ""));
    return t->name ? t : NULL;
}

/* The meta pairs of an input, interned in the result. */
static const struct prof_meta *copy_meta(struct agg *a, const struct prof_meta *m, uint32_t n)
{
    struct prof_meta *d = profile_alloc(a->out, (size_t)n * sizeof *d + 1);
    for (uint32_t i = 0; d && i < n; i++)
        if (!(d[i].key = profile_intern(a->out, m[i].key ? m[i].key : ""))
            || !(d[i].value = profile_intern(a->out, m[i].value ? m[i].value : "")))
            return NULL;
    return d;
}

/* s heads the result (input number `input`): its process, and its
 * metadata laid over input 0's at the end. */
static int copy_process(struct agg *a, const struct prof_process *s, const struct prof_meta *meta,
                        uint32_t nmeta, uint32_t input)
{
    struct prof_process *d = &a->out->process;
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
    a->head_meta = copy_meta(a, meta, nmeta);
    a->nhead = nmeta;
    a->head_input = input;
    if (!a->head_meta)
        return -1;
    if (input == 0) {
        a->first_meta = a->head_meta;
        a->nfirst = nmeta;
    }
    return 0;
}

static int add_label(struct agg *a, uint32_t input, const char *text)
{
    if (a->nlabels == a->label_cap) {
        uint32_t cap = a->label_cap ? a->label_cap * 2 : 64;
        struct agg_label *l = realloc(a->labels, (size_t)cap * sizeof *l);
        if (!l)
            return -1;
        a->labels = l;
        a->label_cap = cap;
    }
    const char *t = profile_intern(a->out, text);
    if (!t)
        return -1;
    a->labels[a->nlabels++] = (struct agg_label){ input, t };
    return 0;
}

/* The process of the result as the first input or a later head set it:
 * the head's fields, the longest duration of all. */
static int take_head(struct agg *a, const struct prof_process *s, const struct prof_meta *meta,
                     uint32_t nmeta, uint32_t input, int ran)
{
    uint64_t longest = a->out->process.duration_ns;
    if ((input == 0 || (ran && !a->head_ran)) && copy_process(a, s, meta, nmeta, input) != 0)
        return -1;
    if (input > 0 && longest > a->out->process.duration_ns)
        a->out->process.duration_ns = longest;
    if (ran)
        a->head_ran = 1;
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
    if (take_head(a, &p->process, p->process.meta, p->process.nmeta, input, ran) != 0)
        return -1;
    if (input > 0 && p->process.duration_ns > a->out->process.duration_ns)
        a->out->process.duration_ns = p->process.duration_ns;
    if (label) {
        char value[1024];
        snprintf(value, sizeof value, "%s pid %d rank %d", label, p->process.pid, p->process.rank);
        if (add_label(a, input, value) != 0)
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
static int emit_thread(struct profile *dst, struct athread *t, struct prof_thread *th)
{
    uint32_t n = t->n;
    uint32_t *start = calloc((size_t)n + 2, sizeof *start);
    uint32_t *child = malloc(((size_t)n + 1) * sizeof *child);
    uint32_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
    uint32_t *stack = malloc(((size_t)n + 1) * sizeof *stack);
    uint32_t *newidx = malloc(((size_t)n + 1) * sizeof *newidx);
    free(t->order);
    t->order = malloc(((size_t)n + 1) * sizeof *t->order);
    th->nodes = profile_alloc(dst, (size_t)n * sizeof *th->nodes + 1);
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
                .calls = an->calls,
                .incl_ns = an->incl,
                .excl_ns = an->excl,
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

enum {
    M_INPUTS,
    M_MIN_CALLS,
    M_MEAN_CALLS,
    M_MAX_CALLS,
    M_MIN_INCL,
    M_MEAN_INCL,
    M_MAX_INCL,
    M_MIN_INCL_IN,
    M_MAX_INCL_IN,
    M_MIN_EXCL,
    M_MEAN_EXCL,
    M_MAX_EXCL,
    NMETRICS
};
static const char *const metric_names[NMETRICS] = {
    "inputs",      "min_calls",      "mean_calls",     "max_calls",   "min_incl_ns",  "mean_incl_ns",
    "max_incl_ns", "min_incl_input", "max_incl_input", "min_excl_ns", "mean_excl_ns", "max_excl_ns",
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

/* Pairs set one after the other, a key set again replacing its value in
 * place (profile_set_meta's rule), in time linear in the pairs. */
struct meta_set {
    struct prof_meta *m;
    uint32_t n;
    struct u64map keys; /* interned key pointer -> index */
};

static int meta_set(struct meta_set *ms, const char *key, const char *value)
{
    if (u64map_room(&ms->keys) != 0)
        return -1;
    size_t j = u64map_slot(&ms->keys, (uint64_t)(uintptr_t)key);
    if (ms->keys.keys[j]) {
        ms->m[ms->keys.vals[j]].value = value;
        return 0;
    }
    u64map_put(&ms->keys, j, (uint64_t)(uintptr_t)key, ms->n);
    ms->m[ms->n++] = (struct prof_meta){ key, value };
    return 0;
}

/* The result's metadata as folding the inputs in order would have set it:
 * input 0's, the labels of the inputs before the head, the head's, the
 * other labels. */
static int compose_meta(struct agg *a)
{
    struct profile *p = a->out;
    size_t cap = (size_t)a->nfirst + a->nhead + a->nlabels + 1;
    struct meta_set ms = { .m = profile_alloc(p, cap * sizeof *ms.m) };
    int rc = ms.m ? 0 : -1;
    for (uint32_t i = 0; rc == 0 && i < a->nfirst; i++)
        rc = meta_set(&ms, a->first_meta[i].key, a->first_meta[i].value);
    uint32_t l = 0;
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        for (; rc == 0 && l < a->nlabels && (pass || a->labels[l].input < a->head_input); l++) {
            char key[32];
            snprintf(key, sizeof key, "input.%u", a->labels[l].input);
            const char *k = profile_intern(p, key);
            rc = k ? meta_set(&ms, k, a->labels[l].text) : -1;
        }
        for (uint32_t i = 0; !pass && a->head_input > 0 && rc == 0 && i < a->nhead; i++)
            rc = meta_set(&ms, a->head_meta[i].key, a->head_meta[i].value);
    }
    u64map_free(&ms.keys);
    p->process.meta = ms.m;
    p->process.nmeta = ms.n;
    return rc;
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
    if (compose_meta(a) != 0)
        return NULL;
    char buf[32];
    snprintf(buf, sizeof buf, "%u", a->ninputs);
    if (a->ninputs > 1
        && (profile_set_meta(p, "merged_inputs", buf) != 0 || profile_set_meta(p, "source", "merge") != 0))
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
        if (emit_thread(p, t, th) != 0)
            return NULL;
        if (emit_stats(a, t, th) != 0)
            return NULL;
    }
    p->nthreads = a->nthreads;
    a->out = NULL; /* the caller owns it now */
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

/* ---- partial merges: the state of a fold, as a profile ------------------------------ */
/*
 * A partial is what agg_finish would need of the inputs folded so far,
 * kept whole so that folding partials of consecutive ranges of inputs, in
 * order, gives exactly what folding the inputs one by one gives:
 *
 *   metadata  "hookit.partial" = "INPUTS HEAD_INPUT HEAD_RAN NFIRST NHEAD NLABELS",
 *             then NFIRST pairs (input 0's metadata), NHEAD pairs (the
 *             head's, when it is not input 0), NLABELS pairs (input number,
 *             label); other parts of the merge add theirs after (merge_ranks)
 *   process   the head's, with the longest duration
 *   functions in order of discovery; nodes in preorder, siblings in order of
 *             discovery (what agg_finish writes)
 *   columns   the state per node: present, first_absent, last_seen (input
 *             numbers of this partial), min/max of calls, inclusive and
 *             exclusive time, the inputs of the inclusive min and max, then
 *             the summed columns under their own names.
 */
enum {
    P_PRESENT,
    P_FIRST_ABSENT,
    P_LAST_SEEN,
    P_MIN_CALLS,
    P_MAX_CALLS,
    P_MIN_INCL,
    P_MAX_INCL,
    P_MIN_INCL_IN,
    P_MAX_INCL_IN,
    P_MIN_EXCL,
    P_MAX_EXCL,
    NPARTIAL
};
static const char *const partial_names[NPARTIAL] = {
    "partial:present",        "partial:first_absent", "partial:last_seen",   "partial:min_calls",
    "partial:max_calls",      "partial:min_incl_ns",  "partial:max_incl_ns", "partial:min_incl_input",
    "partial:max_incl_input", "partial:min_excl_ns",  "partial:max_excl_ns",
};
#define PARTIAL_KEY "hookit.partial"

/* The absence of node n from the inputs after the last one it was seen
 * in, up to input `upto` (exclusive), is noted. */
static void settle(struct anode *n, uint32_t upto)
{
    if (n->seen && n->last_seen + 1 < upto && n->first_absent > n->last_seen + 1)
        n->first_absent = n->last_seen + 1;
    if (!n->seen && upto > 0)
        n->first_absent = 0;
}

static void commit_all(struct agg *a)
{
    for (uint32_t k = 0; k < a->nthreads; k++)
        for (uint32_t i = 0; i < a->threads[k].n; i++)
            commit(&a->threads[k].nodes[i]);
}

static int partial_meta(struct agg *a, struct profile *dst)
{
    uint32_t nhead = a->head_input > 0 ? a->nhead : 0;
    size_t n = 1 + (size_t)a->nfirst + nhead + a->nlabels;
    struct prof_meta *m = profile_alloc(dst, n * sizeof *m);
    char head[160];
    snprintf(head, sizeof head, "%u %u %d %u %u %u", a->ninputs, a->head_input, a->head_ran, a->nfirst, nhead,
             a->nlabels);
    if (!m || !(m[0].key = profile_intern(dst, PARTIAL_KEY)) || !(m[0].value = profile_intern(dst, head)))
        return -1;
    size_t k = 1;
    for (uint32_t i = 0; i < a->nfirst; i++, k++)
        m[k] = (struct prof_meta){ profile_intern(dst, a->first_meta[i].key),
                                   profile_intern(dst, a->first_meta[i].value) };
    for (uint32_t i = 0; i < nhead; i++, k++)
        m[k] = (struct prof_meta){ profile_intern(dst, a->head_meta[i].key),
                                   profile_intern(dst, a->head_meta[i].value) };
    for (uint32_t i = 0; i < a->nlabels; i++, k++) {
        char in[16];
        snprintf(in, sizeof in, "%u", a->labels[i].input);
        m[k] = (struct prof_meta){ profile_intern(dst, in), profile_intern(dst, a->labels[i].text) };
    }
    for (size_t i = 0; i < n; i++)
        if (!m[i].key || !m[i].value)
            return -1;
    dst->process.meta = m;
    dst->process.nmeta = (uint32_t)n;
    return 0;
}

static int partial_process(struct agg *a, struct profile *dst)
{
    const struct prof_process *s = &a->out->process;
    struct prof_process *d = &dst->process;
    *d = *s;
    d->exe = profile_intern(dst, s->exe ? s->exe : "");
    d->argv = profile_alloc(dst, ((size_t)s->argc + 1) * sizeof *d->argv);
    if (!d->exe || !d->argv)
        return -1;
    for (uint32_t i = 0; i < s->argc; i++)
        if (!(d->argv[i] = profile_intern(dst, s->argv[i])))
            return -1;
    return partial_meta(a, dst);
}

static int partial_columns(struct agg *a, struct profile *dst, struct athread *t, struct prof_thread *th)
{
    uint32_t ncols = NPARTIAL + a->nsums;
    th->metrics = profile_alloc(dst, ncols * sizeof *th->metrics);
    if (!th->metrics)
        return -1;
    for (uint32_t m = 0; m < ncols; m++) {
        th->metrics[m].name =
            profile_intern(dst, m < NPARTIAL ? partial_names[m] : a->sum_names[m - NPARTIAL]);
        th->metrics[m].values = profile_alloc(dst, (size_t)th->nnodes * sizeof(uint64_t) + 1);
        if (!th->metrics[m].name || !th->metrics[m].values)
            return -1;
    }
    th->nmetrics = ncols;
    for (uint32_t k = 0; k < th->nnodes; k++) {
        struct anode *an = &t->nodes[t->order[k]];
        settle(an, a->ninputs);
        uint64_t v[NPARTIAL] = {
            [P_PRESENT] = an->present,         [P_FIRST_ABSENT] = an->first_absent,
            [P_LAST_SEEN] = an->last_seen,     [P_MIN_CALLS] = an->min_calls,
            [P_MAX_CALLS] = an->max_calls,     [P_MIN_INCL] = an->min_incl,
            [P_MAX_INCL] = an->max_incl,       [P_MIN_INCL_IN] = an->min_incl_in,
            [P_MAX_INCL_IN] = an->max_incl_in, [P_MIN_EXCL] = an->min_excl,
            [P_MAX_EXCL] = an->max_excl,
        };
        for (int m = 0; m < NPARTIAL; m++)
            th->metrics[m].values[k] = v[m];
        for (uint32_t m = 0; m < a->nsums; m++)
            th->metrics[NPARTIAL + m].values[k] = an->msum[m];
    }
    return 0;
}

struct profile *agg_partial(struct agg *a)
{
    if (a->flags & AGG_PER_INPUT)
        return NULL; /* per-input numbers do not travel */
    struct profile *p = profile_new();
    if (!p)
        return NULL;
    commit_all(a);
    qsort(a->threads, a->nthreads, sizeof *a->threads, by_index);
    p->funcs = profile_alloc(p, (size_t)a->nfuncs * sizeof *p->funcs + 1);
    p->threads = profile_alloc(p, (size_t)a->nthreads * sizeof *p->threads + 1);
    int rc = p->funcs && p->threads ? partial_process(a, p) : -1;
    for (uint32_t f = 0; rc == 0 && f < a->nfuncs; f++) {
        const struct prof_func *s = &a->funcs[f];
        p->funcs[f].addr = s->addr;
        rc = profile_name_func(p, &p->funcs[f], s->name, s->module, s->file, s->line);
    }
    p->nfuncs = a->nfuncs;
    for (uint32_t k = 0; rc == 0 && k < a->nthreads; k++) {
        struct athread *t = &a->threads[k];
        struct prof_thread *th = &p->threads[k];
        th->tid = t->tid;
        th->index = t->index;
        th->name = profile_intern(p, t->name);
        rc = th->name && emit_thread(p, t, th) == 0 ? partial_columns(a, p, t, th) : -1;
        p->nthreads = k + 1;
    }
    if (rc != 0) {
        profile_free(p);
        return NULL;
    }
    return p;
}

/* The header of a partial: 0 and its numbers, or -1 when p is not one. */
struct partial_head {
    uint32_t inputs, head_input, nfirst, nhead, nlabels;
    int head_ran;
};

static int partial_head(const struct profile *p, struct partial_head *h)
{
    const struct prof_process *pr = &p->process;
    if (pr->nmeta < 1 || !pr->meta[0].key || strcmp(pr->meta[0].key, PARTIAL_KEY) != 0
        || sscanf(pr->meta[0].value, "%u %u %d %u %u %u", &h->inputs, &h->head_input, &h->head_ran,
                  &h->nfirst, &h->nhead, &h->nlabels)
            != 6)
        return -1;
    uint64_t need = 1ull + h->nfirst + h->nhead + h->nlabels;
    return need <= pr->nmeta && h->inputs > 0 && h->head_input < h->inputs ? 0 : -1;
}

int agg_is_partial(const struct profile *p)
{
    struct partial_head h;
    return partial_head(p, &h) == 0;
}

uint32_t agg_partial_inputs(const struct profile *p)
{
    struct partial_head h;
    return partial_head(p, &h) == 0 ? h.inputs : 0;
}

uint32_t agg_inputs(const struct agg *a)
{
    return a->ninputs;
}

/* Node n (state over this agg's inputs [0, off)) takes in the state of a
 * partial over the inputs [off, off + inputs): column values v. */
static void fold_partial_node(struct anode *n, uint32_t off, const uint64_t *v, const struct prof_node *src)
{
    settle(n, off);
    if (n->first_absent == UINT32_MAX && v[P_FIRST_ABSENT] != UINT32_MAX)
        n->first_absent = off + (uint32_t)v[P_FIRST_ABSENT];
    if (!n->present || v[P_MIN_CALLS] < n->min_calls)
        n->min_calls = v[P_MIN_CALLS];
    if (!n->present || v[P_MAX_CALLS] > n->max_calls)
        n->max_calls = v[P_MAX_CALLS];
    if (!n->present || v[P_MIN_INCL] < n->min_incl) {
        n->min_incl = v[P_MIN_INCL];
        n->min_incl_in = off + (uint32_t)v[P_MIN_INCL_IN];
    }
    if (!n->present || v[P_MAX_INCL] > n->max_incl) {
        n->max_incl = v[P_MAX_INCL];
        n->max_incl_in = off + (uint32_t)v[P_MAX_INCL_IN];
    }
    if (!n->present || v[P_MIN_EXCL] < n->min_excl)
        n->min_excl = v[P_MIN_EXCL];
    if (!n->present || v[P_MAX_EXCL] > n->max_excl)
        n->max_excl = v[P_MAX_EXCL];
    n->present += (uint32_t)v[P_PRESENT];
    n->seen = 1;
    n->last_seen = off + (uint32_t)v[P_LAST_SEEN];
    n->calls += src->calls;
    n->incl += src->incl_ns;
    n->excl += src->excl_ns;
}

/* The partial's process and metadata, following this agg's inputs. */
static int fold_partial_head(struct agg *a, const struct profile *part, const struct partial_head *h,
                             uint32_t off)
{
    const struct prof_meta *m = part->process.meta + 1;
    const struct prof_meta *first = m, *head = h->head_input ? m + h->nfirst : m;
    uint32_t nhead = h->head_input ? h->nhead : h->nfirst;
    uint64_t longest = a->out->process.duration_ns;
    if (off == 0) {
        if (copy_process(a, &part->process, first, h->nfirst, 0) != 0
            || (h->head_input && copy_process(a, &part->process, head, nhead, h->head_input) != 0))
            return -1;
        a->head_ran = h->head_ran;
    } else if (h->head_ran && !a->head_ran) {
        if (copy_process(a, &part->process, head, nhead, off + h->head_input) != 0)
            return -1;
        a->head_ran = 1;
    }
    if (off > 0 && longest > a->out->process.duration_ns)
        a->out->process.duration_ns = longest;
    if (part->process.duration_ns > a->out->process.duration_ns)
        a->out->process.duration_ns = part->process.duration_ns;
    const struct prof_meta *labels = m + h->nfirst + h->nhead;
    for (uint32_t i = 0; i < h->nlabels; i++)
        if (add_label(a, off + (uint32_t)strtoul(labels[i].key, NULL, 10), labels[i].value) != 0)
            return -1;
    return 0;
}

static int fold_partial_thread(struct agg *a, const struct prof_thread *src, const uint32_t *fmap,
                               uint32_t nfuncs, uint32_t off)
{
    const uint64_t *cols[NPARTIAL];
    for (int m = 0; m < NPARTIAL; m++) {
        const struct prof_metric *c = profile_find_metric(src, partial_names[m]);
        if (!c)
            return -1;
        cols[m] = c->values;
    }
    int sums[AGG_MAX_SUMS * 2 + 64];
    if (src->nmetrics > sizeof sums / sizeof *sums)
        return -1;
    sum_columns(a, src, sums);
    struct athread *t = thread_for(a, src);
    uint32_t *map = malloc(((size_t)src->nnodes + 1) * sizeof *map);
    int rc = t && map ? 0 : -1;
    for (uint32_t i = 0; rc == 0 && i < src->nnodes; i++) {
        const struct prof_node *sn = &src->nodes[i];
        uint32_t parent = sn->parent != PROF_NONE && sn->parent < i ? map[sn->parent] : PROF_NONE;
        uint32_t n = sn->func < nfuncs ? node_of(a, t, parent, fmap[sn->func]) : PROF_NONE;
        if (n == PROF_NONE) {
            rc = -1;
            break;
        }
        map[i] = n;
        uint64_t v[NPARTIAL];
        for (int m = 0; m < NPARTIAL; m++)
            v[m] = cols[m][i];
        fold_partial_node(&t->nodes[n], off, v, sn);
        for (uint32_t c = 0; c < src->nmetrics; c++)
            if (sums[c] >= 0)
                t->nodes[n].msum[sums[c]] += src->metrics[c].values[i];
    }
    free(map);
    return rc;
}

int agg_add_partial(struct agg *a, const struct profile *part)
{
    struct partial_head h;
    if (partial_head(part, &h) != 0 || (a->flags & AGG_PER_INPUT))
        return -1;
    uint32_t off = a->ninputs;
    commit_all(a);
    if (fold_partial_head(a, part, &h, off) != 0)
        return -1;
    uint32_t *fmap = malloc(((size_t)part->nfuncs + 1) * sizeof *fmap);
    if (!fmap)
        return -1;
    int rc = 0;
    for (uint32_t f = 0; rc == 0 && f < part->nfuncs; f++)
        if ((fmap[f] = func_of(a, &part->funcs[f])) == PROF_NONE)
            rc = -1;
    for (uint32_t k = 0; rc == 0 && k < part->nthreads; k++)
        rc = fold_partial_thread(a, &part->threads[k], fmap, part->nfuncs, off);
    free(fmap);
    a->ninputs = off + h.inputs;
    return rc;
}
