/* The per-context numbers: an extension block (one arena slot group,
 * struct node_ext) hanging off the node the calling thread is in
 * (arena_node.ext).  Only the node's own thread makes and writes it, like
 * the node itself; readers see it through the release store. */
#include "metrics_internal.h"

#include <errno.h>
#include <string.h>

/* noinline: the callers' fast path is the cached block
 * (metrics_context_ext); this is the miss. */
JP_NOINSTR __attribute__((noinline)) struct node_ext *metrics_ext_of(arena_ref node)
{
    if (!node)
        return NULL;
    struct arena_node *n = jp_node(node);
    arena_ref e = n->ext;
    if (!e) {
        int saved = errno; /* the arena may map pages */
        e = jp_arena_alloc(NODE_EXT_SLOTS);
        errno = saved;
        if (!e)
            return NULL;
        memset(jp_at(e), 0, NODE_EXT_SLOTS * ARENA_SLOT);
        __atomic_store_n(&n->ext, e, __ATOMIC_RELEASE);
    }
    return jp_at(e);
}

JP_NOINSTR struct node_ext *jp_node_ext(arena_ref node)
{
    return metrics_ext_of(node);
}
