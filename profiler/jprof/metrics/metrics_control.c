/* reset and zerobase (`hookit ctl`, control.c's run_command, before the
 * trees): the I/O and memory numbers follow the call counts (docs/io.md,
 * "Reset and zerobase"). */
#include "metrics_internal.h"
#include "profile/arena_walk.h"

#include <errno.h>

JP_NOINSTR static int zero_ext(void *ctx, arena_ref ref, const struct arena_node *node)
{
    (void)ctx;
    (void)ref;
    arena_ref e = __atomic_load_n(&node->ext, __ATOMIC_ACQUIRE);
    if (e) {
        uint64_t *v = jp_at(e);
        for (size_t i = 0; i < NODE_EXT_COUNTERS; i++) /* not wait_since: a wait goes on */
            __atomic_store_n(&v[i], 0, __ATOMIC_RELAXED);
    }
    return 0;
}

/* Every thread's per-context numbers to zero (zerobase keeps the trees;
 * reset makes new nodes, which start without numbers). */
JP_NOINSTR static void zero_contexts(void)
{
    struct arena_view v = { jp_arena_base, jp_arena_header()->used };
    for (arena_ref r = jp_arena_header()->first_thread; r; r = ((struct arena_thread *)jp_at(r))->next) {
        const struct arena_thread *rec = jp_at(r);
        arena_ref root = __atomic_load_n(&rec->root, __ATOMIC_ACQUIRE);
        if (!root)
            continue;
        zero_ext(NULL, root, jp_node(root));
        arena_tree_walk(&v, root, zero_ext, NULL, NULL);
    }
}

JP_NOINSTR void jp_metrics_control(uint32_t cmd)
{
    if (!metrics_active())
        return;
    if (cmd != ARENA_CMD_RESET && cmd != ARENA_CMD_ZEROBASE)
        return;
    int saved = errno;
    metrics_counts_rebase();
    metrics_files_clear();
    metrics_series_clear();
    if (cmd == ARENA_CMD_RESET)
        metrics_heap_reset();
    else
        metrics_heap_zerobase();
    /* zerobase keeps the trees; reset makes new nodes, without numbers, but
     * the old open path's stay in a blocked thread's tree until it applies
     * the reset, and a profile written meanwhile reads them (control.c). */
    zero_contexts();
    errno = saved;
}
