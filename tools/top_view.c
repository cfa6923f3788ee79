/* The tables of hookit top over several processes (top_view.h). */
#include "tools/top_view.h"
#include "profile/merge_ranks.h"
#include "profile/u64map.h"
#include "tools/tree.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VIEW_HEADER "hookit-top-view 1\n"

/* Time, time in MPI (outermost MPI frames, MPI_Init's included: the job
 * profile's per-rank table leaves start-up and shut-down out, but a rank
 * that spends them in MPI is not computing) and calls of one process. */
static void measure(const struct profile *p, struct top_member *v)
{
    v->pid = p->process.pid;
    v->rank = p->process.rank;
    v->time_ns = v->mpi_ns = v->calls = 0;
    for (uint32_t t = 0; t < p->nthreads; t++) {
        const struct prof_thread *th = &p->threads[t];
        unsigned char *in_mpi = calloc(th->nnodes + 1, 1);
        for (uint32_t i = 0; i < th->nnodes; i++) {
            const struct prof_node *nd = &th->nodes[i];
            const char *name = p->funcs[nd->func].name;
            int mpi = rank_is_mpi_name(name);
            int under = nd->parent != PROF_NONE && in_mpi && in_mpi[nd->parent];
            if (in_mpi)
                in_mpi[i] = (unsigned char)(mpi || under);
            if (nd->parent == PROF_NONE)
                v->time_ns += nd->incl_ns;
            if (mpi && !under)
                v->mpi_ns += nd->incl_ns;
            v->calls += nd->calls;
        }
        free(in_mpi);
    }
}

static int rehash(struct top_view *v)
{
    uint32_t size = v->nslots ? v->nslots * 2 : 1024;
    uint32_t *slots = calloc(size, sizeof *slots);
    if (!slots)
        return -1;
    for (uint32_t f = 0; f < v->nfn; f++) {
        uint32_t s = (uint32_t)u64map_hash_pair(v->fn[f].name, v->fn[f].module) & (size - 1);
        while (slots[s])
            s = (s + 1) & (size - 1);
        slots[s] = f + 1;
    }
    free(v->slots);
    v->slots = slots;
    v->nslots = size;
    return 0;
}

/* The function (name, module), made when new (zero, no member yet). */
static struct top_fn *function(struct top_view *v, const char *name, const char *module)
{
    if ((v->nfn + 1) * 2 > v->nslots && rehash(v) != 0)
        return NULL;
    uint32_t s = (uint32_t)u64map_hash_pair(name, module) & (v->nslots - 1);
    for (; v->slots[s]; s = (s + 1) & (v->nslots - 1)) {
        struct top_fn *f = &v->fn[v->slots[s] - 1];
        if (!strcmp(f->name, name) && !strcmp(f->module, module))
            return f;
    }
    if (v->nfn == v->capfn) {
        uint32_t cap = v->capfn ? v->capfn * 2 : 256;
        struct top_fn *fn = realloc(v->fn, cap * sizeof *fn);
        if (!fn)
            return NULL;
        v->fn = fn;
        v->capfn = cap;
    }
    struct top_fn *f = &v->fn[v->nfn];
    *f = (struct top_fn){ .name = strdup(name), .module = strdup(module), .min_ns = UINT64_MAX };
    if (!f->name || !f->module) {
        free(f->name);
        free(f->module);
        return NULL;
    }
    v->slots[s] = ++v->nfn;
    return f;
}

/* Fold one function's figures over some processes, those that follow the
 * ones in already (min: the first smallest; max: the last largest, as one
 * fold of every process in turn gives). */
static void fold_function(struct top_fn *f, const struct top_fn *more)
{
    f->self_ns += more->self_ns;
    f->incl_ns += more->incl_ns;
    f->calls += more->calls;
    f->members += more->members;
    if (more->min_ns < f->min_ns) {
        f->min_ns = more->min_ns;
        f->min_member = more->min_member;
    }
    if (more->max_ns >= f->max_ns) {
        f->max_ns = more->max_ns;
        f->max_member = more->max_member;
    }
}

static int add_member(struct top_view *v, const struct top_member *m)
{
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 16;
        struct top_member *mv = realloc(v->mv, cap * sizeof *mv);
        if (!mv)
            return -1;
        v->mv = mv;
        v->cap = cap;
    }
    v->mv[v->n++] = *m;
    return 0;
}

int top_view_add(struct top_view *v, const struct profile *p)
{
    struct top_member m;
    measure(p, &m);
    struct func_total *tot = calloc(p->nfuncs + 1, sizeof *tot);
    if (!tot)
        return -1;
    for (uint32_t t = 0; t < p->nthreads; t++) {
        struct tree tr;
        if (tree_build(&tr, p, &p->threads[t]) == 0) {
            tree_func_totals(&tr, tot); /* adds up over the threads */
            tree_free(&tr);
        }
    }
    int rc = 0;
    for (uint32_t i = 0; i < p->nfuncs && rc == 0; i++) {
        if (!tot[i].nodes)
            continue;
        struct top_fn *f = function(v, p->funcs[i].name ? p->funcs[i].name : "?",
                                    p->funcs[i].module ? p->funcs[i].module : "");
        struct top_fn one = { .self_ns = tot[i].self_ns,
                              .incl_ns = tot[i].incl_ns,
                              .calls = tot[i].calls,
                              .min_ns = tot[i].incl_ns,
                              .max_ns = tot[i].incl_ns,
                              .min_member = v->n,
                              .max_member = v->n,
                              .members = 1 };
        if (f)
            fold_function(f, &one);
        else
            rc = -1;
    }
    free(tot);
    return rc == 0 ? add_member(v, &m) : -1;
}

/* A name in a line of text: no tab or newline in it. */
static void put_name(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '\t' || *s == '\n' ? ' ' : *s, f);
}

char *top_view_text(const struct top_view *v)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    fputs(VIEW_HEADER, f);
    for (uint32_t i = 0; i < v->n; i++)
        fprintf(f, "M\t%d\t%d\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n", (int)v->mv[i].pid,
                (int)v->mv[i].rank, v->mv[i].time_ns, v->mv[i].mpi_ns, v->mv[i].calls);
    for (uint32_t i = 0; i < v->nfn; i++) {
        const struct top_fn *fn = &v->fn[i];
        fprintf(f, "F\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%u\t%" PRIu64 "\t%u\t%u\t",
                fn->self_ns, fn->incl_ns, fn->calls, fn->min_ns, fn->min_member, fn->max_ns, fn->max_member,
                fn->members);
        put_name(f, fn->module);
        fputc('\t', f);
        put_name(f, fn->name);
        fputc('\n', f);
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

static int add_line(struct top_view *v, char *line, uint32_t base, uint32_t members)
{
    int used = 0;
    if (line[0] == 'M') {
        int pid, rank;
        struct top_member m;
        if (sscanf(line, "M\t%d\t%d\t%" SCNu64 "\t%" SCNu64 "\t%" SCNu64 "%n", &pid, &rank, &m.time_ns,
                   &m.mpi_ns, &m.calls, &used)
                != 5
            || line[used])
            return -1;
        m.pid = (pid_t)pid;
        m.rank = rank;
        return add_member(v, &m);
    }
    struct top_fn more = { 0 };
    if (line[0] != 'F'
        || sscanf(line, "F\t%" SCNu64 "\t%" SCNu64 "\t%" SCNu64 "\t%" SCNu64 "\t%u\t%" SCNu64 "\t%u\t%u\t%n",
                  &more.self_ns, &more.incl_ns, &more.calls, &more.min_ns, &more.min_member, &more.max_ns,
                  &more.max_member, &more.members, &used)
            != 8
        || !used || more.min_member >= members || more.max_member >= members)
        return -1;
    char *module = line + used, *tab = strchr(module, '\t');
    if (!tab)
        return -1;
    *tab = 0;
    more.min_member += base;
    more.max_member += base;
    struct top_fn *f = function(v, tab + 1, module);
    if (!f)
        return -1;
    fold_function(f, &more);
    return 0;
}

int top_view_add_text(struct top_view *v, const char *text)
{
    size_t hl = strlen(VIEW_HEADER);
    if (!text || strncmp(text, VIEW_HEADER, hl))
        return -1;
    char *copy = strdup(text + hl), *save = NULL;
    if (!copy)
        return -1;
    /* the members first (the functions name them by index) */
    uint32_t base = v->n, members = 0;
    for (const char *s = copy; *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : s + strlen(s))
        members += *s == 'M';
    int rc = 0;
    for (char *line = strtok_r(copy, "\n", &save); line && rc == 0; line = strtok_r(NULL, "\n", &save))
        rc = add_line(v, line, base, members);
    free(copy);
    return rc == 0 && v->n == base + members ? 0 : -1;
}

static int by_self_desc(const void *a, const void *b)
{
    const struct top_fn *x = a, *y = b;
    if (x->self_ns != y->self_ns)
        return x->self_ns > y->self_ns ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->module, y->module);
}

void top_view_finish(struct top_view *v)
{
    /* a process without the function has 0 of it */
    for (uint32_t i = 0; i < v->nfn; i++)
        if (v->fn[i].members < v->n)
            v->fn[i].min_ns = 0, v->fn[i].min_member = TOP_NO_MEMBER;
    qsort(v->fn, v->nfn, sizeof *v->fn, by_self_desc);
    free(v->slots); /* the order changed: no lookups after this */
    v->slots = NULL;
    v->nslots = 0;
}

void top_view_free(struct top_view *v)
{
    for (uint32_t i = 0; i < v->nfn; i++) {
        free(v->fn[i].name);
        free(v->fn[i].module);
    }
    free(v->fn);
    free(v->mv);
    free(v->slots);
    *v = (struct top_view){ 0 };
}
