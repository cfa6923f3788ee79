/*
 * hookit report --io, --alloc, --leaks: the call tree with the I/O or
 * allocation numbers libjprof keeps per calling context (metric columns
 * io_calls, io_bytes_read, ... of docs/io.md), and the contexts whose
 * blocks were never freed.  Also the helpers `hookit io` shares.
 */
#include "tools/cli.h"
#include "tools/names.h"
#include "tools/report.h"
#include "tools/report_io.h"
#include "tools/tree.h"
#include "tools/units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

const uint64_t *rio_column(const struct prof_thread *th, const char *name)
{
    const struct prof_metric *m = profile_find_metric(th, name);
    return m ? m->values : NULL;
}

static uint64_t val(const uint64_t *col, uint32_t i)
{
    return col ? col[i] : 0;
}

void rio_print_path(FILE *out, const struct profile *p, const struct prof_thread *th, uint32_t node)
{
    /* The names shown (--demangle), a recursion written once with its
     * count (names_print_collapsed). */
    uint32_t depth = 0;
    for (uint32_t i = node; i != PROF_NONE; i = th->nodes[i].parent)
        depth++;
    const char **names = malloc(((size_t)depth + 1) * sizeof *names);
    if (!names)
        return;
    uint32_t n = depth;
    for (uint32_t i = node; i != PROF_NONE; i = th->nodes[i].parent)
        names[--n] = names_display(&p->funcs[th->nodes[i].func]);
    names_print_collapsed(out, names, depth, " -> ");
    free(names);
}

/* ---- the tree views ---------------------------------------------------------- */
struct io_tree {
    const struct report_opts *o;
    int view;
    const uint64_t *c[6];               /* the view's columns, self values */
    uint64_t *key;                      /* inclusive sort key per node */
    FILE *out;
};

static const char *const io_names[] = { "io_calls", "io_bytes_read", "io_bytes_written", "io_ns" };
static const char *const alloc_names[] = { "alloc_calls", "alloc_bytes", "free_calls", "free_bytes",
                                           "leak_count", "leak_bytes" };

static uint64_t self_key(const struct io_tree *x, uint32_t i)
{
    if (x->view == REPORT_IO)
        return val(x->c[1], i) + val(x->c[2], i) + (val(x->c[0], i) ? 1 : 0);
    return val(x->c[1], i) + val(x->c[0], i) + val(x->c[2], i);
}

static const struct io_tree *sort_ctx;

static int cmp_key(const struct tree *t, uint32_t a, uint32_t b)
{
    uint64_t ka = sort_ctx->key[a], kb = sort_ctx->key[b];
    return ka != kb ? (ka > kb ? -1 : 1) : tree_cmp_incl_desc(t, a, b);
}

static void print_io_line(const struct tree *t, uint32_t node, void *ctx)
{
    const struct io_tree *x = ctx;
    if (!x->key[node])
        return;
    if (x->o->depth && t->depth[node] >= x->o->depth)
        return;
    const struct prof_node *n = &t->thread->nodes[node];
    int indent = t->depth[node] < 64 ? (int)t->depth[node] : 64;
    FILE *out = x->out;
    if (x->view == REPORT_IO) {
        char ns[UNITS_BUF];
        fprintf(out, "%6u %10" PRIu64 " %10" PRIu64 " %14" PRIu64 " %14" PRIu64 " %10s  %*s",
                t->depth[node], n->calls, val(x->c[0], node), val(x->c[1], node),
                val(x->c[2], node), units_ns(val(x->c[3], node), ns), indent, "");
    } else {
        fprintf(out, "%6u %10" PRIu64 " %10" PRIu64 " %14" PRIu64 " %10" PRIu64 " %14" PRIu64
                " %14" PRIu64 "  %*s",
                t->depth[node], n->calls, val(x->c[0], node), val(x->c[1], node),
                val(x->c[2], node), val(x->c[3], node), val(x->c[5], node), indent, "");
    }
    names_print_jprof(out, tree_func(t, node));
    fputc('\n', out);
}

static int tree_view(FILE *out, const struct profile *p, const struct prof_thread *th,
                     const struct report_opts *o)
{
    struct io_tree x = { .o = o, .view = o->io_view, .out = out };
    const char *const *names = o->io_view == REPORT_IO ? io_names : alloc_names;
    int ncols = o->io_view == REPORT_IO ? 4 : 6;
    int any = 0;
    for (int i = 0; i < ncols; i++)
        any |= (x.c[i] = rio_column(th, names[i])) != NULL;
    if (!any) {
        fprintf(out, "(no %s numbers in this profile: run with JPROFOPTS=%s)\n",
                o->io_view == REPORT_IO ? "I/O" : "allocation",
                o->io_view == REPORT_IO ? "io" : "alloc");
        return 0;
    }
    x.key = calloc((size_t)th->nnodes + 1, sizeof *x.key);
    struct tree t;
    if (!x.key || tree_build(&t, p, th) < 0) {
        free(x.key);
        return cli_fail("thread %u: %s", th->index, errno == EINVAL ? "invalid call tree" : "out of memory");
    }
    for (uint32_t i = th->nnodes; i-- > 0;) {       /* children come after parents */
        x.key[i] += self_key(&x, i);
        if (th->nodes[i].parent != PROF_NONE)
            x.key[th->nodes[i].parent] += x.key[i];
    }
    sort_ctx = &x;
    tree_sort(&t, cmp_key);
    if (o->io_view == REPORT_IO)
        fprintf(out, "%6s %10s %10s %14s %14s %10s  %s\n", "LV", "CALLS", "IO_CALLS", "READ",
                "WRITTEN", "IO_TIME", "NAME");
    else
        fprintf(out, "%6s %10s %10s %14s %10s %14s %14s  %s\n", "LV", "CALLS", "ALLOCS",
                "ALLOC_BYTES", "FREES", "FREED_BYTES", "LEAKED_BYTES", "NAME");
    int rc = tree_walk(&t, print_io_line, NULL, &x);
    tree_free(&t);
    free(x.key);
    return rc < 0 ? cli_fail("out of memory") : 0;
}

/* ---- leaks -------------------------------------------------------------------------- */
struct leak_row {
    uint32_t node;
    uint64_t count, bytes;
};

static int leak_cmp(const void *a, const void *b)
{
    const struct leak_row *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

static int leaks_view(FILE *out, const struct profile *p, const struct prof_thread *th)
{
    const uint64_t *count = rio_column(th, "leak_count"), *bytes = rio_column(th, "leak_bytes");
    if (!count || !bytes) {
        fputs("(no allocation numbers in this profile: run with JPROFOPTS=alloc)\n", out);
        return 0;
    }
    struct leak_row *rows = malloc(((size_t)th->nnodes + 1) * sizeof *rows);
    if (!rows)
        return cli_fail("out of memory");
    size_t n = 0;
    uint64_t total = 0, blocks = 0;
    for (uint32_t i = 0; i < th->nnodes; i++)
        if (count[i]) {
            rows[n++] = (struct leak_row){ i, count[i], bytes[i] };
            total += bytes[i];
            blocks += count[i];
        }
    qsort(rows, n, sizeof *rows, leak_cmp);
    fprintf(out, "%14s %10s  %s\n", "LEAKED_BYTES", "BLOCKS", "ALLOCATED IN");
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%14" PRIu64 " %10" PRIu64 "  ", rows[i].bytes, rows[i].count);
        rio_print_path(out, p, th, rows[i].node);
        fputc('\n', out);
    }
    fprintf(out, "%14" PRIu64 " %10" PRIu64 "  total in this thread's contexts\n", total, blocks);
    free(rows);
    return 0;
}

int report_io_view(FILE *out, const struct profile *p, const struct prof_thread *th,
                   const struct report_opts *o)
{
    if (o->io_view == REPORT_LEAKS)
        return leaks_view(out, p, th);
    return tree_view(out, p, th, o);
}

/* The process-wide lines under the views (metadata written by libjprof). */
void report_io_summary(FILE *out, const struct profile *p, int view)
{
    static const char *const io_keys[] = { "io_calls", "io_bytes_read", "io_bytes_written", "io_ns", NULL };
    static const char *const alloc_keys[] = { "alloc_calls", "alloc_bytes", "free_calls", "free_bytes",
                                              "alloc_peak_bytes", "alloc_live_bytes", "leak_count",
                                              "leak_bytes", "leak_bytes_no_context", NULL };
    const char *const *keys = view == REPORT_IO ? io_keys : alloc_keys;
    int any = 0;
    for (const char *const *k = keys; *k; k++) {
        const char *v = profile_get_meta(p, *k);
        if (!v)
            continue;
        fprintf(out, "%s%s %s", any ? "  " : "process: ", *k, v);
        any = 1;
    }
    if (any)
        fputc('\n', out);
}
