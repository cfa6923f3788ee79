/* hookit report on a profile merged across ranks (docs/mpi.md): the call
 * tree with the spread over ranks (SUM, MIN and its rank, MEAN, MAX and its
 * rank, IMB = max / mean), then a per-rank summary (time, MPI time and its
 * share) and the functions over ranks, from the tables hookit merge wrote
 * (profile/merge_ranks.h). */
#include "tools/cli.h"
#include "tools/report.h"
#include "profile/merge_ranks.h"
#include "tools/names.h"
#include "tools/tree.h"
#include "tools/units.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int report_ranks_is(const struct profile *p)
{
    return profile_get_meta(p, "ranks") && profile_get_meta(p, "functions");
}

struct ranks_ctx {
    FILE *out;
    const struct report_opts *o;
    const uint64_t *min, *mean, *max, *min_rank, *max_rank;
};

static void rank_cell(char *buf, size_t size, const uint64_t *col, uint32_t node)
{
    if (col)
        snprintf(buf, size, "%" PRIu64, col[node]);
    else
        snprintf(buf, size, "-");
}

static double ratio(uint64_t max, uint64_t mean)
{
    return mean ? (double)max / (double)mean : 1.0;
}

static void tree_line(const struct tree *t, uint32_t node, void *vc)
{
    const struct ranks_ctx *c = vc;
    if (c->o->depth && t->depth[node] >= c->o->depth)
        return;
    const struct prof_node *n = &t->thread->nodes[node];
    char sum[UNITS_BUF], mn[UNITS_BUF], me[UNITS_BUF], mx[UNITS_BUF], rmin[16], rmax[16];
    rank_cell(rmin, sizeof rmin, c->min_rank, node);
    rank_cell(rmax, sizeof rmax, c->max_rank, node);
    double imb = ratio(c->max[node], c->mean[node]);
    fprintf(c->out, "%6u %10" PRIu64 " %10s %10s %4s %10s %10s %4s %s%6.2f%s  %*s", t->depth[node],
            n->calls, units_ns(n->incl_ns, sum), units_ns(c->min[node], mn), rmin,
            units_ns(c->mean[node], me), units_ns(c->max[node], mx), rmax,
            style_heat(c->o, (imb - 1.0) * 100.0), imb, style_reset(c->o),
            (int)(t->depth[node] < 64 ? t->depth[node] : 64), "");
    names_print_jprof(c->out, tree_func(t, node));
    fputc('\n', c->out);
}

static const uint64_t *column(const struct prof_thread *th, const char *name)
{
    const struct prof_metric *m = profile_find_metric(th, name);
    return m ? m->values : NULL;
}

int report_ranks_tree(FILE *out, const struct profile *p, const struct prof_thread *th,
                      const struct report_opts *o)
{
    struct ranks_ctx c = {
        .out = out, .o = o,
        .min = column(th, "min_incl_ns"), .mean = column(th, "mean_incl_ns"),
        .max = column(th, "max_incl_ns"),
        .min_rank = column(th, "min_incl_rank"), .max_rank = column(th, "max_incl_rank"),
    };
    if (th->nnodes && (!c.min || !c.mean || !c.max))
        return cli_fail("thread %u: not merged by hookit merge (no min/mean/max columns)", th->index);
    fprintf(out, "%6s %10s %10s %10s %4s %10s %10s %4s %6s  %s\n", "LV", "CALLS", "SUM", "MIN",
            "@R", "MEAN", "MAX", "@R", "IMB", "NAME");
    if (!th->nnodes)
        return 0;
    struct tree t;
    if (tree_build(&t, p, th) < 0)
        return cli_fail("thread %u: invalid call tree or out of memory", th->index);
    tree_sort(&t, tree_cmp_incl_desc);
    int rc = tree_walk(&t, tree_line, NULL, &c);
    tree_free(&t);
    return rc < 0 ? cli_fail("out of memory") : 0;
}

/* ---- the tables ------------------------------------------------------------------ */

static uint64_t num(const char *s)
{
    return strtoull(s, NULL, 10);
}

static void summary(FILE *out, const char *table, const struct report_opts *o)
{
    char *copy = strdup(table), *save = NULL;
    if (!copy)
        return;
    uint64_t time = 0, mpi = 0, ranks = 0;
    fprintf(out, "\n%s== per rank%s\n%6s %8s %10s %10s %6s %10s %12s  %s\n", style_bold(o),
            style_reset(o), "RANK", "PID", "TIME", "MPI", "MPI%", "MPI CALLS", "MPI BYTES", "END");
    int header = 1;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[11];
        if (header || rank_table_split(line, f, 11) < 11) {
            header = 0;
            continue;
        }
        char t[UNITS_BUF], m[UNITS_BUF];
        uint64_t tn = num(f[5]), mn = num(f[7]);
        double pct = tn ? 100.0 * (double)mn / (double)tn : 0;
        fprintf(out, "%6s %8s %10s %10s %5.1f%% %10s %12s  %s\n", f[1], f[2], units_ns(tn, t),
                units_ns(mn, m), pct, f[8], f[9], f[4]);
        time += tn;
        mpi += mn;
        ranks++;
    }
    char t[UNITS_BUF], m[UNITS_BUF];
    if (ranks)
        fprintf(out, "%6s %8s %10s %10s %5.1f%%  (mean over %" PRIu64 " ranks)\n", "mean", "",
                units_ns(time / ranks, t), units_ns(mpi / ranks, m),
                time ? 100.0 * (double)mpi / (double)time : 0, ranks);
    free(copy);
}

static void functions(FILE *out, const char *table, const struct report_opts *o)
{
    char *copy = strdup(table), *save = NULL;
    if (!copy)
        return;
    fprintf(out, "\n%s== functions over ranks (inclusive time)%s\n"
            "%10s %10s %4s %10s %10s %4s %6s %12s  %s\n", style_bold(o), style_reset(o),
            "SUM", "MIN", "@R", "MEAN", "MAX", "@R", "IMB", "MPI BYTES", "NAME");
    int header = 1;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[16];
        if (header || rank_table_split(line, f, 16) < 16) {
            header = 0;
            continue;
        }
        char s[UNITS_BUF], mn[UNITS_BUF], me[UNITS_BUF], mx[UNITS_BUF];
        double imb = strtod(f[11], NULL) / 100.0;
        struct prof_func fn = { .name = f[0], .module = f[1] };
        fprintf(out, "%10s %10s %4s %10s %10s %4s %s%6.2f%s %12s  ", units_ns(num(f[4]), s),
                units_ns(num(f[6]), mn), f[7], units_ns(num(f[8]), me), units_ns(num(f[9]), mx),
                f[10], style_heat(o, (imb - 1.0) * 100.0), imb, style_reset(o), f[15]);
        names_print_jprof(out, &fn);
        fputc('\n', out);
    }
    free(copy);
}

void report_ranks_summary(FILE *out, const struct profile *p, const struct report_opts *o)
{
    const char *ranks = profile_get_meta(p, "ranks"), *funcs = profile_get_meta(p, "functions");
    if (ranks)
        summary(out, ranks, o);
    if (funcs)
        functions(out, funcs, o);
}
