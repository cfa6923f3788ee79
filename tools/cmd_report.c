/*
 * hookit report: per-thread call trees (JPROF log-rt style) or a flat
 * profile (gprof style) from profile files.
 */
#include "tools/cli.h"
#include "tools/names.h"
#include "tools/tree.h"
#include "tools/units.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char *const report_usage =
    "usage: hookit report [--flat] [--thread TID] PROFILE...\n"
    "\n"
    "Print each thread of each profile:\n"
    "  default      the call tree, one line per calling context:\n"
    "                 LV    depth (0 = a root)\n"
    "                 CALLS calls in this context\n"
    "                 BASE  exclusive time (the function's own)\n"
    "                 CUM   inclusive time (with its callees)\n"
    "                 NAME  F:module.function(), indented by depth (up to 64)\n"
    "               children are sorted by inclusive time, largest first.\n"
    "  -f, --flat   a flat profile: one line per function over all its calling\n"
    "               contexts: %time self cumulative calls self/call total/call\n"
    "               (cumulative is the running sum of self; total/call is the\n"
    "               inclusive time per call, a recursive function's time counted\n"
    "               once), sorted by self time.\n"
    "\n"
    "Options:\n"
    "  -t, --thread TID   only the thread with kernel thread id TID\n"
    "  -h, --help         this help\n";

struct report_opts {
    int flat;
    int has_tid;
    long tid;
};

static void thread_header(FILE *out, const struct profile *p, const struct prof_thread *t)
{
    fprintf(out, "== pid %d  tid %d  thread %u", p->process.pid, t->tid, t->index);
    if (t->name && *t->name) {
        fputs(" (", out);
        names_print_safe(out, t->name, strlen(t->name));
        fputc(')', out);
    }
    fputs("  exe ", out);
    if (p->process.exe)
        names_print_safe(out, p->process.exe, strlen(p->process.exe));
    fputc('\n', out);
}

/* Indentation stops growing here: a 20000-deep recursion would otherwise
 * print hundreds of megabytes of spaces.  LV still gives the depth. */
#define MAX_INDENT 64

static void print_tree_line(const struct tree *t, uint32_t node, void *ctx)
{
    FILE *out = ctx;
    const struct prof_node *n = &t->thread->nodes[node];
    char base[UNITS_BUF], cum[UNITS_BUF];
    int indent = t->depth[node] < MAX_INDENT ? (int)t->depth[node] : MAX_INDENT;
    fprintf(out, "%6u %10llu %10s %10s  %*s", t->depth[node], (unsigned long long)n->calls,
            units_ns(n->excl_ns, base), units_ns(n->incl_ns, cum), indent, "");
    names_print_jprof(out, tree_func(t, node));
    fputc('\n', out);
}

static int report_tree(FILE *out, const struct profile *p, const struct prof_thread *th)
{
    struct tree t;
    if (tree_build(&t, p, th) < 0)
        return cli_fail("thread %u: %s", th->index,
                        errno == EINVAL ? "invalid call tree" : "out of memory");
    tree_sort(&t, tree_cmp_incl_desc);
    fprintf(out, "%6s %10s %10s %10s  %s\n", "LV", "CALLS", "BASE", "CUM", "NAME");
    int rc = tree_walk(&t, print_tree_line, NULL, out);
    tree_free(&t);
    return rc < 0 ? cli_fail("out of memory") : 0;
}

/* Self time descending, then calls descending, then name, then index. */
static int flat_cmp(const void *va, const void *vb, void *vp)
{
    const struct profile *p = ((void **)vp)[0];
    const struct func_total *tot = ((void **)vp)[1];
    uint32_t a = *(const uint32_t *)va, b = *(const uint32_t *)vb;
    const struct func_total *ta = &tot[a], *tb = &tot[b];
    if (ta->self_ns != tb->self_ns)
        return ta->self_ns > tb->self_ns ? -1 : 1;
    if (ta->calls != tb->calls)
        return ta->calls > tb->calls ? -1 : 1;
    const char *na = p->funcs[a].name, *nb = p->funcs[b].name;
    int c = strcmp(na ? na : "", nb ? nb : "");
    return c ? c : (a < b ? -1 : a > b);
}

static int report_flat(FILE *out, const struct profile *p, const struct prof_thread *th)
{
    struct tree t;
    struct func_total *tot = calloc(p->nfuncs ? p->nfuncs : 1, sizeof *tot);
    uint32_t *order = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof *order);
    if (!tot || !order || tree_build(&t, p, th) < 0) {
        int invalid = tot && order && errno == EINVAL;
        free(tot);
        free(order);
        return cli_fail("thread %u: %s", th->index,
                        invalid ? "invalid call tree" : "out of memory");
    }
    int rc = tree_func_totals(&t, tot);
    tree_free(&t);
    if (rc < 0) {
        free(tot);
        free(order);
        return cli_fail("out of memory");
    }
    uint32_t n = 0;
    uint64_t total_self = 0;
    for (uint32_t f = 0; f < p->nfuncs; f++) {
        if (tot[f].nodes) {
            order[n++] = f;
            total_self += tot[f].self_ns;
        }
    }
    void *ctx[2] = { (void *)p, tot };
    qsort_r(order, n, sizeof *order, flat_cmp, ctx);

    fprintf(out, "%7s %10s %11s %10s %10s %11s  %s\n", "%time", "self", "cumulative",
            "calls", "self/call", "total/call", "name");
    uint64_t cumulative = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct func_total *ft = &tot[order[i]];
        char self[UNITS_BUF], cum[UNITS_BUF], spc[UNITS_BUF], tpc[UNITS_BUF];
        cumulative += ft->self_ns;
        double pct = total_self ? 100.0 * (double)ft->self_ns / (double)total_self : 0.0;
        double calls = ft->calls ? (double)ft->calls : 1.0;
        fprintf(out, "%7.2f %10s %11s %10llu %10s %11s  ", pct, units_ns(ft->self_ns, self),
                units_ns(cumulative, cum), (unsigned long long)ft->calls,
                units_ns_f((double)ft->self_ns / calls, spc),
                units_ns_f((double)ft->incl_ns / calls, tpc));
        names_print_jprof(out, &p->funcs[order[i]]);
        fputc('\n', out);
    }
    free(tot);
    free(order);
    return 0;
}

static int report_profile(FILE *out, const struct profile *p, const struct report_opts *o,
                          int *printed)
{
    for (uint32_t i = 0; i < p->nthreads; i++) {
        const struct prof_thread *th = &p->threads[i];
        if (o->has_tid && th->tid != o->tid)
            continue;
        if ((*printed)++)
            fputc('\n', out);
        thread_header(out, p, th);
        int rc = o->flat ? report_flat(out, p, th) : report_tree(out, p, th);
        if (rc)
            return rc;
    }
    return 0;
}

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        { "flat", no_argument, NULL, 'f' },
        { "thread", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { 0, 0, 0, 0 },
    };
    struct report_opts o = { 0 };
    int c;
    cli_reset_getopt();
    while ((c = getopt_long(argc, argv, ":ft:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            o.flat = 1;
            break;
        case 't': {
            char *end;
            errno = 0;
            o.tid = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || o.tid < 0 || o.tid > INT32_MAX)
                return cli_usage_error("report", "--thread needs a thread id (a number), not '%s'",
                                       optarg);
            o.has_tid = 1;
            break;
        }
        case 'h':
            fputs(report_usage, stdout);
            return EXIT_OK;
        default:
            return cli_option_error("report", c, argv);
        }
    }
    if (optind >= argc)
        return cli_usage_error("report", "no profile given");

    struct loaded_profile *ps;
    size_t n = (size_t)(argc - optind);
    if (cli_load_profiles(argv + optind, n, &ps) < 0)
        return EXIT_FAIL;
    int printed = 0, rc = 0, threads_shown = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (n > 1) {
            if (i)
                fputc('\n', stdout);
            printf("==> %s <==\n", ps[i].path);
            threads_shown += printed;
            printed = 0;
        }
        rc = report_profile(stdout, ps[i].prof, &o, &printed);
    }
    threads_shown += printed;
    cli_free_profiles(ps, n);
    if (rc)
        return rc;
    if (o.has_tid && !threads_shown)
        return cli_fail("no thread with tid %ld in %s", o.tid,
                        n == 1 ? argv[optind] : "the profiles given");
    if (fflush(stdout) != 0 || ferror(stdout))
        return cli_fail("error writing standard output: %s", strerror(errno));
    return EXIT_OK;
}
