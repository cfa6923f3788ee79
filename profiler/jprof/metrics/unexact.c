/* Where the tree may be wrong (docs/exactness.md).  An unmatched exit is
 * counted on the context it concerns, in the node's extension block: for
 * frames the fallback had to close, the outermost of them (entries made
 * while they looked open went under them); for an exit that matched no
 * open frame, the context it came in.  The profile then carries the
 * per-node column "unmatched_exits" (only when some node has one), so
 * `hookit report` names the contexts instead of giving a count alone. */
#include "profiler/jprof/jprof.h"
#include "metrics.h"
#include "profile/profile.h"

#include <string.h>

/* Busy held, by the node's own thread (the extension block's writer). */
JP_NOINSTR void jp_unmatched_at(arena_ref node, uint64_t exits)
{
    struct node_ext *x = jp_node_ext(node);
    if (x)
        x->unmatched_exits += exits;
}

/* build.c: the column, for th whose node i came from nodes[i]. */
JP_NOINSTR int jp_unmatched_thread(struct profile *p, struct prof_thread *th,
                                   const struct arena_copy_node *nodes, uint32_t n)
{
    uint64_t *col = NULL;
    for (uint32_t i = 0; i < n; i++) {
        arena_ref e = __atomic_load_n(&jp_node(nodes[i].ref)->ext, __ATOMIC_ACQUIRE);
        uint64_t v = e ? ((const struct node_ext *)jp_at(e))->unmatched_exits : 0;
        if (!v)
            continue;
        if (!col && !(col = jp_new_column(p, th, "unmatched_exits", n)))
            return -1;
        col[i] = v;
    }
    return 0;
}
