/*
 * hookit export --format=folded: Brendan Gregg's folded stacks, one line per
 * calling context: the function names from the root joined by ';', a space,
 * and the weight: the context's exclusive time in ns, or with --weight
 * its time on the CPU, its time waiting (ns, tools/waittime.h) or its
 * calls.  flamegraph.pl, speedscope and inferno read it.
 *
 * Every context with a non-zero weight gets a line, so the weights add up
 * to the total: the threads' inclusive time (or CPU time, wait, calls).  With several
 * threads each stack starts with a frame "[thread N name]" (none with
 * --merge-threads or --thread).  ';' and line breaks in names become '_'.
 */
#include "tools/cli.h"
#include "tools/export_opts.h"
#include "tools/tree.h"

#include <stdlib.h>
#include <string.h>

struct folded {
    FILE *out;
    const char *prefix;         /* the thread frame or NULL */
    struct waittime w;          /* the thread's wait and CPU columns */
    uint32_t *path;             /* node of each depth */
};

static void put_frame(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc(*s == ';' || *s == '\n' || *s == '\r' ? '_' : *s, out);
}

static void visit(const struct tree *t, uint32_t node, void *vctx)
{
    struct folded *f = vctx;
    uint32_t depth = t->depth[node];
    f->path[depth] = node;
    uint64_t weight = waittime_self(&f->w, t->thread, node, export_options.weight);
    if (weight == 0)
        return;
    if (f->prefix) {
        put_frame(f->out, f->prefix);
        fputc(';', f->out);
    }
    for (uint32_t d = 0; d <= depth; d++) {
        const char *name = t->prof->funcs[t->thread->nodes[f->path[d]].func].name;
        put_frame(f->out, name && *name ? name : "?");
        if (d < depth)
            fputc(';', f->out);
    }
    fprintf(f->out, " %llu\n", (unsigned long long)weight);
}

int export_folded(FILE *out, struct loaded_profile *profiles, size_t n)
{
    int owned;
    struct profile *p = export_select(profiles, n, &owned);
    if (!p)
        return -1;
    int rc = 0;
    for (uint32_t k = 0; k < p->nthreads && rc == 0; k++) {
        const struct prof_thread *th = &p->threads[k];
        char prefix[128];
        snprintf(prefix, sizeof prefix, "[thread %u%s%.60s]", th->index,
                 th->name && *th->name ? " " : "", th->name ? th->name : "");
        struct folded f = {
            out, p->nthreads > 1 ? prefix : NULL, { 0 }, malloc(((size_t)th->nnodes + 1) * sizeof *f.path)
        };
        waittime_of(th, &f.w);
        struct tree t;
        if (!f.path || tree_build(&t, p, th) != 0) {
            free(f.path);
            rc = cli_fail("out of memory");
            break;
        }
        if (tree_walk(&t, visit, NULL, &f) != 0)
            rc = cli_fail("out of memory");
        tree_free(&t);
        free(f.path);
    }
    if (owned)
        profile_free(p);
    return rc ? -1 : 0;
}
