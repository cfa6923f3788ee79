#include "tools/export_opts.h"
#include "tools/aggregate.h"

#include <string.h>

struct export_options export_options;

uint64_t thread_total_ns(const struct prof_thread *th)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < th->nnodes; i++)
        if (th->nodes[i].parent == PROF_NONE)
            total += th->nodes[i].incl_ns;
    return total;
}

static struct profile *merged(struct loaded_profile *ps, size_t n, int flags)
{
    struct agg *a = agg_new(flags, (uint32_t)n);
    struct profile *out = NULL;
    int rc = a ? 0 : -1;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = agg_add(a, ps[i].prof, ps[i].path);
    if (rc == 0)
        out = agg_finish(a);
    agg_free(a);
    if (!out)
        cli_fail("out of memory merging the profiles");
    return out;
}

struct profile *export_select(struct loaded_profile *ps, size_t n, int *owned)
{
    struct profile *p = ps[0].prof;
    *owned = 0;
    if (n > 1 || export_options.merge_threads) {
        p = merged(ps, n, export_options.merge_threads ? AGG_MERGE_THREADS : 0);
        if (!p)
            return NULL;
        *owned = 1;
    }
    if (export_options.has_tid && !export_options.merge_threads) {
        uint32_t k = 0;
        for (uint32_t i = 0; i < p->nthreads; i++)
            if (p->threads[i].tid == export_options.tid)
                p->threads[k++] = p->threads[i];
        if (k == 0) {
            cli_fail("no thread with tid %ld in %s", export_options.tid,
                     n == 1 ? ps[0].path : "the profiles given");
            if (*owned)
                profile_free(p);
            return NULL;
        }
        p->nthreads = k;        /* a loaded profile is only exported once: ours to trim */
    }
    return p;
}
