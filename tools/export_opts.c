#include "tools/export_opts.h"
#include "profile/aggregate.h"
#include "tools/find_fn.h"
#include "tools/fold.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct export_options export_options;

int export_parse_ns(const char *s, uint64_t *ns)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v >= 0))
        return -1;
    double mul = !*end || !strcmp(end, "ns") ? 1 : !strcmp(end, "us") ? 1e3 :
                 !strcmp(end, "ms") ? 1e6 : !strcmp(end, "s") ? 1e9 : -1;
    if (mul < 0 || v * mul > 1.8e19)
        return -1;
    *ns = (uint64_t)(v * mul + 0.5);
    return 0;
}

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

/* --fold-frames PATTERNs against the profiles: each names a function. */
static int check_fold_patterns(const struct loaded_profile *ps, size_t n)
{
    const struct profile **profs = calloc(n + 1, sizeof *profs);
    if (!profs)
        return cli_fail("out of memory"), -1;
    for (size_t i = 0; i < n; i++)
        profs[i] = ps[i].prof;
    int rc = fold_frames_check(profs, n, n == 1 ? ps[0].path : "the profiles given");
    free(profs);
    return rc;
}

int export_apply_options(struct loaded_profile *ps, size_t n)
{
    size_t kept = 0;
    if (check_fold_patterns(ps, n) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (fold_frames(ps[i].prof) != 0)
            return cli_fail("out of memory"), -1;
        if (export_options.merge_threads) {
            struct profile *m = agg_merge_threads(ps[i].prof);
            if (!m)
                return cli_fail("out of memory merging threads"), -1;
            profile_free(ps[i].prof);
            ps[i].prof = m;
        } else if (export_options.has_tid) {
            struct profile *p = ps[i].prof;
            uint32_t k = 0;
            for (uint32_t t = 0; t < p->nthreads; t++)
                if (find_thread_matches(p->threads[t].tid, p->threads[t].name, export_options.tid,
                                        export_options.thread_name))
                    p->threads[k++] = p->threads[t];
            p->nthreads = k;    /* the loaded profile is ours to trim */
            kept += k;
        }
    }
    if (export_options.has_tid && !export_options.merge_threads && !kept) {
        if (export_options.thread_name)
            cli_fail("no thread named '%s' in %s", export_options.thread_name,
                     n == 1 ? ps[0].path : "the profiles given");
        else
            cli_fail("no thread with tid %ld in %s", export_options.tid,
                     n == 1 ? ps[0].path : "the profiles given");
        return -1;
    }
    return 0;
}

struct profile *export_select(struct loaded_profile *ps, size_t n, int *owned)
{
    *owned = 0;
    if (n == 1)
        return ps[0].prof;
    struct profile *p = merged(ps, n, 0);
    *owned = p != NULL;
    return p;
}
