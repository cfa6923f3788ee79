/* hookit merge across ranks: per-rank summary, per-function statistics over
 * ranks, ranks and imbalance per call path (profile/merge_ranks.h). */
#include "profile/merge_ranks.h"
#include "profile/u64map.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rfunc {
    char *name, *module;
    /* the input being folded */
    uint64_t cur_calls, cur_incl, cur_excl, cur_bytes;
    int touched;
    /* over inputs */
    uint32_t present, first_absent, last_seen;
    int seen;
    uint64_t calls, incl, excl, bytes;
    uint64_t min_incl, max_incl, min_excl, max_excl;
    uint32_t min_in, max_in;
};

struct rank_merge {
    struct rfunc *funcs;
    uint32_t nfuncs, cap;
    uint32_t *hash; /* open addressing: func index + 1 */
    size_t hmask;
    uint32_t *touched; /* funcs of the input being folded */
    uint32_t ntouched;
    int32_t *ranks; /* per input */
    uint32_t ninputs, rank_cap;
    int all_ranked;
    char *summary; /* the "ranks" table */
    size_t summary_len;
    FILE *summary_f;
};

int rank_table_split(char *line, char **fields, int max)
{
    int n = 0;
    while (n < max) {
        fields[n++] = line;
        char *tab = strchr(line, '\t');
        if (!tab)
            break;
        *tab = 0;
        line = tab + 1;
    }
    return n;
}

int rank_is_mpi_name(const char *name)
{
    return name && !strncmp(name, "MPI:", 4);
}

/* MPI_Init and MPI_Finalize are frames, but start-up and shut-down, not
 * the communication a rank's MPI time is about (as mpiP counts it). */
static int counts_as_mpi_time(const char *name)
{
    return rank_is_mpi_name(name) && strcmp(name, "MPI:MPI_Init") != 0
        && strcmp(name, "MPI:MPI_Init_thread") != 0 && strcmp(name, "MPI:MPI_Finalize") != 0;
}

struct rank_merge *rank_merge_new(void)
{
    struct rank_merge *rm = calloc(1, sizeof *rm);
    if (!rm)
        return NULL;
    rm->hmask = 1023;
    rm->hash = calloc(rm->hmask + 1, sizeof *rm->hash);
    rm->summary_f = open_memstream(&rm->summary, &rm->summary_len);
    rm->all_ranked = 1;
    if (!rm->hash || !rm->summary_f) {
        rank_merge_free(rm);
        return NULL;
    }
    fputs("input\trank\tpid\thost\tend\ttime_ns\tapp_ns\tmpi_ns\tmpi_calls\tmpi_bytes\tfile\n",
          rm->summary_f);
    return rm;
}

void rank_merge_free(struct rank_merge *rm)
{
    if (!rm)
        return;
    for (uint32_t i = 0; i < rm->nfuncs; i++) {
        free(rm->funcs[i].name);
        free(rm->funcs[i].module);
    }
    free(rm->funcs);
    free(rm->hash);
    free(rm->touched);
    free(rm->ranks);
    if (rm->summary_f)
        fclose(rm->summary_f);
    free(rm->summary);
    free(rm);
}

static int rehash(struct rank_merge *rm)
{
    size_t cap = (rm->hmask + 1) * 2;
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h)
        return -1;
    for (uint32_t i = 0; i < rm->nfuncs; i++) {
        size_t j = u64map_hash_pair(rm->funcs[i].name, rm->funcs[i].module) & (cap - 1);
        while (h[j])
            j = (j + 1) & (cap - 1);
        h[j] = i + 1;
    }
    free(rm->hash);
    rm->hash = h;
    rm->hmask = cap - 1;
    return 0;
}

static int64_t func_index(struct rank_merge *rm, const char *name, const char *module)
{
    name = name ? name : "?";
    module = module ? module : "";
    if ((rm->nfuncs + 1) * 2 > rm->hmask + 1 && rehash(rm) != 0)
        return -1;
    size_t j = u64map_hash_pair(name, module) & rm->hmask;
    for (; rm->hash[j]; j = (j + 1) & rm->hmask) {
        struct rfunc *f = &rm->funcs[rm->hash[j] - 1];
        if (!strcmp(f->name, name) && !strcmp(f->module, module))
            return rm->hash[j] - 1;
    }
    if (rm->nfuncs == rm->cap) {
        uint32_t cap = rm->cap ? rm->cap * 2 : 256;
        struct rfunc *fs = realloc(rm->funcs, (size_t)cap * sizeof *fs);
        uint32_t *t = realloc(rm->touched, (size_t)cap * sizeof *t);
        if (fs)
            rm->funcs = fs;
        if (t)
            rm->touched = t;
        if (!fs || !t)
            return -1;
        rm->cap = cap;
    }
    struct rfunc *f = &rm->funcs[rm->nfuncs];
    memset(f, 0, sizeof *f);
    f->first_absent = UINT32_MAX;
    f->name = strdup(name);
    f->module = strdup(module);
    if (!f->name || !f->module) {
        free(f->name);
        free(f->module);
        return -1;
    }
    rm->hash[j] = rm->nfuncs + 1;
    return rm->nfuncs++;
}

/* The input's numbers become part of the function's statistics. */
static void commit(struct rfunc *f, uint32_t input)
{
    if (!f->seen && input > 0)
        f->first_absent = 0;
    else if (f->seen && input > f->last_seen + 1 && f->first_absent == UINT32_MAX)
        f->first_absent = f->last_seen + 1;
    if (!f->present || f->cur_incl < f->min_incl) {
        f->min_incl = f->cur_incl;
        f->min_in = input;
    }
    if (!f->present || f->cur_incl > f->max_incl) {
        f->max_incl = f->cur_incl;
        f->max_in = input;
    }
    if (!f->present || f->cur_excl < f->min_excl)
        f->min_excl = f->cur_excl;
    if (!f->present || f->cur_excl > f->max_excl)
        f->max_excl = f->cur_excl;
    f->calls += f->cur_calls;
    f->incl += f->cur_incl;
    f->excl += f->cur_excl;
    f->bytes += f->cur_bytes;
    f->present++;
    f->seen = 1;
    f->last_seen = input;
    f->cur_calls = f->cur_incl = f->cur_excl = f->cur_bytes = 0;
    f->touched = 0;
}

struct totals {
    uint64_t app_ns, mpi_ns, mpi_calls, mpi_bytes;
};

/* One thread: per-function numbers (a recursive function's inclusive time
 * counted at its outermost call), and the outermost MPI frames' totals. */
static int fold_thread(struct rank_merge *rm, const struct profile *p, const struct prof_thread *th,
                       const int64_t *fmap, uint32_t *onpath, struct totals *tot)
{
    const struct prof_metric *bytes_col = profile_find_metric(th, "mpi_bytes");
    uint32_t *stack = malloc(((size_t)th->nnodes + 1) * sizeof *stack);
    uint8_t *in_mpi = calloc((size_t)th->nnodes + 1, 1);
    if (!stack || !in_mpi) {
        free(stack);
        free(in_mpi);
        return -1;
    }
    uint32_t sp = 0;
    for (uint32_t i = 0; i < th->nnodes; i++) {
        const struct prof_node *n = &th->nodes[i];
        uint32_t parent = n->parent < i ? n->parent : PROF_NONE;
        while (sp > 0 && stack[sp - 1] != parent)
            onpath[th->nodes[stack[--sp]].func]--;
        if (n->func >= p->nfuncs)
            continue;
        uint64_t bytes = bytes_col ? bytes_col->values[i] : 0;
        int mpi = rank_is_mpi_name(p->funcs[n->func].name);
        if (parent == PROF_NONE)
            tot->app_ns += n->incl_ns;
        else
            in_mpi[i] = in_mpi[parent] || rank_is_mpi_name(p->funcs[th->nodes[parent].func].name);
        if (mpi && !in_mpi[i] && counts_as_mpi_time(p->funcs[n->func].name)) {
            tot->mpi_ns += n->incl_ns;
            tot->mpi_calls += n->calls;
            tot->mpi_bytes += bytes;
        }
        struct rfunc *f = &rm->funcs[fmap[n->func]];
        if (!f->touched) {
            f->touched = 1;
            rm->touched[rm->ntouched++] = (uint32_t)fmap[n->func];
        }
        f->cur_calls += n->calls;
        f->cur_excl += n->excl_ns;
        f->cur_bytes += bytes;
        if (!onpath[n->func])
            f->cur_incl += n->incl_ns;
        onpath[n->func]++;
        stack[sp++] = i;
    }
    while (sp > 0)
        onpath[th->nodes[stack[--sp]].func]--;
    free(stack);
    free(in_mpi);
    return 0;
}

/* The next input's rank. */
static int note_rank(struct rank_merge *rm, int32_t rank)
{
    if (rm->ninputs == rm->rank_cap) {
        uint32_t cap = rm->rank_cap ? rm->rank_cap * 2 : 64;
        int32_t *r = realloc(rm->ranks, (size_t)cap * sizeof *r);
        if (!r)
            return -1;
        rm->ranks = r;
        rm->rank_cap = cap;
    }
    rm->ranks[rm->ninputs++] = rank;
    if (rank < 0)
        rm->all_ranked = 0;
    return 0;
}

int rank_merge_add(struct rank_merge *rm, const struct profile *p, const char *path)
{
    uint32_t input = rm->ninputs;
    if (note_rank(rm, p->process.rank) != 0)
        return -1;
    int64_t *fmap = malloc(((size_t)p->nfuncs + 1) * sizeof *fmap);
    uint32_t *onpath = calloc((size_t)p->nfuncs + 1, sizeof *onpath);
    int rc = fmap && onpath ? 0 : -1;
    for (uint32_t f = 0; rc == 0 && f < p->nfuncs; f++)
        if ((fmap[f] = func_index(rm, p->funcs[f].name, p->funcs[f].module)) < 0)
            rc = -1;
    struct totals tot = { 0 };
    rm->ntouched = 0;
    for (uint32_t k = 0; rc == 0 && k < p->nthreads; k++)
        rc = fold_thread(rm, p, &p->threads[k], fmap, onpath, &tot);
    for (uint32_t k = 0; k < rm->ntouched; k++)
        commit(&rm->funcs[rm->touched[k]], input);
    free(fmap);
    free(onpath);
    if (rc != 0)
        return -1;
    const char *host = profile_get_meta(p, "hostname");
    const char *end = profile_get_meta(p, "end");
    fprintf(rm->summary_f,
            "%u\t%d\t%d\t%s\t%s\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%s\n",
            input, p->process.rank, p->process.pid, host ? host : "", end ? end : "", p->process.duration_ns,
            tot.app_ns, tot.mpi_ns, tot.mpi_calls, tot.mpi_bytes, path ? path : "");
    return ferror(rm->summary_f) ? -1 : 0;
}

/* Who an input is in the output: its rank, else its number. */
static int64_t who(const struct rank_merge *rm, uint32_t input)
{
    return input < rm->ninputs && rm->all_ranked ? rm->ranks[input] : (int64_t)input;
}

static double imbalance(uint64_t max, uint64_t sum, uint32_t n)
{
    double mean = n ? (double)sum / n : 0;
    return mean > 0 ? (double)max / mean : 1.0;
}

static int by_incl(const void *x, const void *y, void *ctx)
{
    const struct rfunc *fs = ctx;
    const struct rfunc *a = &fs[*(const uint32_t *)x], *b = &fs[*(const uint32_t *)y];
    if (a->incl != b->incl)
        return a->incl < b->incl ? 1 : -1;
    int c = strcmp(a->name, b->name);
    return c ? c : strcmp(a->module, b->module); /* one order, whatever the order of discovery */
}

static char *functions_table(struct rank_merge *rm)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    uint32_t *order = malloc(((size_t)rm->nfuncs + 1) * sizeof *order);
    if (!f || !order) {
        if (f)
            fclose(f);
        free(buf);
        free(order);
        return NULL;
    }
    for (uint32_t i = 0; i < rm->nfuncs; i++)
        order[i] = i;
    qsort_r(order, rm->nfuncs, sizeof *order, by_incl, rm->funcs);
    fputs("name\tmodule\tinputs\tcalls\tincl_ns\texcl_ns\tmin_incl_ns\tmin_rank\tmean_incl_ns"
          "\tmax_incl_ns\tmax_rank\timbalance_pct\tmin_excl_ns\tmean_excl_ns\tmax_excl_ns\tmpi_bytes\n",
          f);
    uint32_t n = rm->ninputs ? rm->ninputs : 1;
    for (uint32_t k = 0; k < rm->nfuncs; k++) {
        struct rfunc *fn = &rm->funcs[order[k]];
        if (!fn->seen)
            continue; /* in a function table, in no tree */
        if (fn->seen && fn->last_seen + 1 < rm->ninputs && fn->first_absent == UINT32_MAX)
            fn->first_absent = fn->last_seen + 1;
        int absent = fn->present < rm->ninputs;
        uint32_t min_in = absent ? fn->first_absent : fn->min_in;
        fprintf(f,
                "%s\t%s\t%u\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRId64 "\t%" PRIu64
                "\t%" PRIu64 "\t%" PRId64 "\t%.0f\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n",
                fn->name, fn->module, fn->present, fn->calls, fn->incl, fn->excl, absent ? 0 : fn->min_incl,
                who(rm, min_in), fn->incl / n, fn->max_incl, who(rm, fn->max_in),
                100.0 * imbalance(fn->max_incl, fn->incl, n), absent ? 0 : fn->min_excl, fn->excl / n,
                fn->max_excl, fn->bytes);
    }
    free(order);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static uint64_t *new_column(struct profile *p, struct prof_thread *th, const char *name)
{
    struct prof_metric *m = &th->metrics[th->nmetrics];
    m->name = profile_intern(p, name);
    m->values = profile_alloc(p, (size_t)th->nnodes * sizeof *m->values + 1);
    if (!m->name || !m->values)
        return NULL;
    th->nmetrics++;
    return m->values;
}

/* min_incl_rank, max_incl_rank, imbalance_pct from the merge's columns. */
static int rank_columns(struct rank_merge *rm, struct profile *p, struct prof_thread *th)
{
    const struct prof_metric *min_in = profile_find_metric(th, "min_incl_input");
    const struct prof_metric *max_in = profile_find_metric(th, "max_incl_input");
    const struct prof_metric *max = profile_find_metric(th, "max_incl_ns");
    if (!min_in || !max_in || !max)
        return 0;
    struct prof_metric *old = th->metrics;
    th->metrics = profile_alloc(p, (th->nmetrics + 3) * sizeof *th->metrics);
    if (!th->metrics)
        return -1;
    memcpy(th->metrics, old, th->nmetrics * sizeof *old);
    uint64_t *minr = rm->all_ranked ? new_column(p, th, "min_incl_rank") : NULL;
    uint64_t *maxr = rm->all_ranked ? new_column(p, th, "max_incl_rank") : NULL;
    uint64_t *imb = new_column(p, th, "imbalance_pct");
    if ((rm->all_ranked && (!minr || !maxr)) || !imb)
        return -1;
    uint32_t n = rm->ninputs ? rm->ninputs : 1;
    for (uint32_t i = 0; i < th->nnodes; i++) {
        if (minr) {
            minr[i] = (uint64_t)who(rm, (uint32_t)min_in->values[i]);
            maxr[i] = (uint64_t)who(rm, (uint32_t)max_in->values[i]);
        }
        imb[i] = (uint64_t)(100.0 * imbalance(max->values[i], th->nodes[i].incl_ns, n) + 0.5);
    }
    return 0;
}

int rank_merge_finish(struct rank_merge *rm, struct profile *merged)
{
    if (fflush(rm->summary_f) != 0)
        return -1;
    int rc = 0;
    if (rm->all_ranked && rm->ninputs) { /* the ranks of an MPI job */
        char *functions = functions_table(rm);
        char count[32];
        snprintf(count, sizeof count, "%u", rm->ninputs);
        rc = functions && profile_set_meta(merged, "ranks", rm->summary) == 0
                && profile_set_meta(merged, "functions", functions) == 0
                && profile_set_meta(merged, "merged_ranks", count) == 0
            ? 0
            : -1;
        free(functions);
    }
    for (uint32_t k = 0; rc == 0 && k < merged->nthreads; k++)
        rc = rank_columns(rm, merged, &merged->threads[k]);
    return rc;
}

/* ---- partial merges (profile/aggregate.h): the per-rank rows and the
 * per-function state, as two metadata pairs of the partial ------------------------- */
#define RANKS_KEY "hookit.partial.ranks"
#define FUNCS_KEY "hookit.partial.functions"

/* "Settled": the absence of f from the inputs after the last it was seen
 * in, up to `upto`, is noted (as commit would note it). */
static void settle_func(struct rfunc *f, uint32_t upto)
{
    if (f->seen && f->last_seen + 1 < upto && f->first_absent == UINT32_MAX)
        f->first_absent = f->last_seen + 1;
    if (!f->seen && upto > 0)
        f->first_absent = 0;
}

int rank_merge_partial(struct rank_merge *rm, struct profile *dst)
{
    if (fflush(rm->summary_f) != 0)
        return -1;
    const char *rows = strchr(rm->summary, '\n'); /* after the header */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return -1;
    fprintf(f, "%u\n", rm->ninputs);
    for (uint32_t i = 0; i < rm->nfuncs; i++) {
        struct rfunc *fn = &rm->funcs[i];
        if (!fn->seen)
            continue;
        settle_func(fn, rm->ninputs);
        fprintf(f,
                "%s\t%s\t%u\t%u\t%u\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
                "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%u\t%u\n",
                fn->name, fn->module, fn->present, fn->first_absent, fn->last_seen, fn->calls, fn->incl,
                fn->excl, fn->bytes, fn->min_incl, fn->max_incl, fn->min_excl, fn->max_excl, fn->min_in,
                fn->max_in);
    }
    int rc = fclose(f) == 0 && profile_set_meta(dst, RANKS_KEY, rows ? rows + 1 : "") == 0
            && profile_set_meta(dst, FUNCS_KEY, buf) == 0
        ? 0
        : -1;
    free(buf);
    return rc;
}

/* The rows of the partial, numbered on from off. */
static int fold_rows(struct rank_merge *rm, const char *rows, uint32_t off, uint32_t n)
{
    uint32_t seen = 0;
    for (const char *line = rows; *line && seen < n;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *rest;
        unsigned long input = strtoul(line, &rest, 10);
        if (*rest != '\t' || input != seen)
            return -1;
        int32_t rank = (int32_t)strtol(rest + 1, NULL, 10);
        if (note_rank(rm, rank) != 0)
            return -1;
        fprintf(rm->summary_f, "%u%.*s\n", off + seen, (int)(len - (size_t)(rest - line)), rest);
        seen++;
        line += len + (end ? 1 : 0);
    }
    return seen == n && !ferror(rm->summary_f) ? 0 : -1;
}

static int fold_func(struct rank_merge *rm, char *line, uint32_t off)
{
    char *f[15];
    if (rank_table_split(line, f, 15) != 15)
        return -1;
    int64_t k = func_index(rm, f[0], f[1]);
    if (k < 0)
        return -1;
    struct rfunc *fn = &rm->funcs[k];
    uint64_t v[13];
    for (int i = 0; i < 13; i++)
        v[i] = strtoull(f[i + 2], NULL, 10);
    enum {
        PRESENT,
        FIRST_ABSENT,
        LAST_SEEN,
        CALLS,
        INCL,
        EXCL,
        BYTES,
        MIN_INCL,
        MAX_INCL,
        MIN_EXCL,
        MAX_EXCL,
        MIN_IN,
        MAX_IN
    };
    settle_func(fn, off);
    if (fn->first_absent == UINT32_MAX && v[FIRST_ABSENT] != UINT32_MAX)
        fn->first_absent = off + (uint32_t)v[FIRST_ABSENT];
    if (!fn->present || v[MIN_INCL] < fn->min_incl) {
        fn->min_incl = v[MIN_INCL];
        fn->min_in = off + (uint32_t)v[MIN_IN];
    }
    if (!fn->present || v[MAX_INCL] > fn->max_incl) {
        fn->max_incl = v[MAX_INCL];
        fn->max_in = off + (uint32_t)v[MAX_IN];
    }
    if (!fn->present || v[MIN_EXCL] < fn->min_excl)
        fn->min_excl = v[MIN_EXCL];
    if (!fn->present || v[MAX_EXCL] > fn->max_excl)
        fn->max_excl = v[MAX_EXCL];
    fn->calls += v[CALLS];
    fn->incl += v[INCL];
    fn->excl += v[EXCL];
    fn->bytes += v[BYTES];
    fn->present += (uint32_t)v[PRESENT];
    fn->seen = 1;
    fn->last_seen = off + (uint32_t)v[LAST_SEEN];
    return 0;
}

int rank_merge_add_partial(struct rank_merge *rm, const struct profile *partial)
{
    const char *rows = NULL, *funcs = NULL;
    for (uint32_t i = partial->process.nmeta; i-- > 0;) { /* they come last */
        const struct prof_meta *m = &partial->process.meta[i];
        if (!rows && !strcmp(m->key, RANKS_KEY))
            rows = m->value;
        else if (!funcs && !strcmp(m->key, FUNCS_KEY))
            funcs = m->value;
        if (rows && funcs)
            break;
    }
    char *copy = funcs ? strdup(funcs) : NULL;
    if (!rows || !copy) {
        free(copy);
        return -1;
    }
    uint32_t off = rm->ninputs;
    char *line = copy, *end = strchr(line, '\n');
    unsigned long n = strtoul(line, NULL, 10);
    int rc = end && n > 0 && n <= UINT32_MAX - off ? fold_rows(rm, rows, off, (uint32_t)n) : -1;
    for (line = end ? end + 1 : NULL; rc == 0 && line && *line; line = end ? end + 1 : NULL) {
        end = strchr(line, '\n');
        if (end)
            *end = 0;
        rc = fold_func(rm, line, off);
    }
    free(copy);
    return rc;
}
