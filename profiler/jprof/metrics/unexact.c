/* Where the tree may be wrong (docs/exactness.md), counted on the context
 * concerned, in the node's extension block, so `hookit report` names the
 * contexts instead of giving a count alone.
 *
 * An unmatched exit: for frames the fallback had to close, on the
 * outermost of them (entries made while they looked open went under
 * them); for an exit that matched no open frame, on the context it came
 * in.  An undecided landing pad: on the frame it kept open (the landing
 * pad's calls went under it).  The profile carries the per-node columns
 * "unmatched_exits" and "undecided_landing_pads", each only when some
 * node has one. */
#include "profiler/jprof/jprof.h"
#include "metrics.h"
#include "profile/procinfo.h"
#include "profile/profile.h"

#include <stddef.h>
#include <string.h>

/* Busy held, by the node's own thread (the extension block's writer). */
JP_NOINSTR void jp_unmatched_at(arena_ref node, uint64_t exits)
{
    struct node_ext *x = jp_node_ext(node);
    if (x)
        x->unmatched_exits += exits;
}

JP_NOINSTR void jp_undecided_pad_at(arena_ref node)
{
    struct node_ext *x = jp_node_ext(node);
    if (x)
        x->undecided_pads++;
}

/* The column name for th from the counter at offset in the nodes'
 * extension blocks, when some node has one. */
JP_NOINSTR static int counter_column(struct profile *p, struct prof_thread *th,
                                     const struct arena_copy_node *nodes, uint32_t n, const char *name,
                                     size_t offset)
{
    uint64_t *col = NULL;
    for (uint32_t i = 0; i < n; i++) {
        arena_ref e = __atomic_load_n(&jp_node(nodes[i].ref)->ext, __ATOMIC_ACQUIRE);
        uint64_t v = 0;
        if (e)
            memcpy(&v, (const char *)jp_at(e) + offset, sizeof v);
        if (!v)
            continue;
        if (!col && !(col = jp_new_column(p, th, name, n)))
            return -1;
        col[i] = v;
    }
    return 0;
}

/* build.c: the columns, for th whose node i came from nodes[i]. */
JP_NOINSTR int jp_unmatched_thread(struct profile *p, struct prof_thread *th,
                                   const struct arena_copy_node *nodes, uint32_t n)
{
    if (counter_column(p, th, nodes, n, "unmatched_exits", offsetof(struct node_ext, unmatched_exits)) != 0)
        return -1;
    return counter_column(p, th, nodes, n, "undecided_landing_pads",
                          offsetof(struct node_ext, undecided_pads));
}

/* build.c, once the threads are in: the landing pads undecided in all of
 * them, as metadata when there are any. */
JP_NOINSTR int jp_undecided_process(struct profile *p)
{
    uint64_t sum = 0;
    for (uint32_t t = 0; t < p->nthreads; t++) {
        const struct prof_metric *m = profile_find_metric(&p->threads[t], "undecided_landing_pads");
        for (uint32_t i = 0; m && i < p->threads[t].nnodes; i++)
            sum += m->values[i];
    }
    return sum ? procinfo_set_meta_u64(p, "undecided_landing_pads", sum) : 0;
}
