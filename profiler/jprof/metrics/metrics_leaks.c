/* What was never freed, per allocating node: an open-addressing map built
 * from the live-block table once per profile (the first of
 * jp_metrics_thread and jp_metrics_process to need it) and dropped when
 * the profile's metadata is written.  malloc is fine here: it runs while
 * a profile is written, not inside an allocation. */
#include "metrics_blocks.h"

#include <stdlib.h>

struct leak {
    arena_ref node; /* 0: an empty slot */
    uint64_t count, bytes;
};
static struct leak *leaks;
static size_t leak_mask;
static uint64_t leaked_unattributed; /* bytes allocated outside any context */

JP_NOINSTR static struct leak *leak_slot(arena_ref node)
{
    size_t i = (size_t)(node * 0x9e3779b1u) & leak_mask;
    while (leaks[i].node && leaks[i].node != node)
        i = (i + 1) & leak_mask;
    return &leaks[i];
}

JP_NOINSTR static void add_leak(const struct block *b, void *ctx)
{
    (void)ctx;
    if (!b->node) {
        leaked_unattributed += b->size;
        return;
    }
    struct leak *l = leak_slot(b->node);
    l->node = b->node;
    l->count++;
    l->bytes += b->size;
}

/* Sized at twice the blocks (each node at most one slot, at least one
 * slot empty): probes stay short and always end. */
JP_NOINSTR int metrics_leaks_build(void)
{
    if (leaks)
        return 0;
    size_t live = metrics_blocks_count();
    size_t cap = 64;
    while (cap < live * 2 + 2)
        cap *= 2;
    leaks = calloc(cap, sizeof *leaks);
    if (!leaks)
        return -1;
    leak_mask = cap - 1;
    leaked_unattributed = 0;
    metrics_blocks_each(metrics_block_epoch(), add_leak, NULL);
    return 0;
}

JP_NOINSTR int metrics_leaks_of(arena_ref node, uint64_t *count, uint64_t *bytes)
{
    const struct leak *l = leak_slot(node);
    if (!l->node)
        return 0;
    *count = l->count;
    *bytes = l->bytes;
    return 1;
}

JP_NOINSTR void metrics_leaks_totals(uint64_t *count, uint64_t *bytes, uint64_t *no_context)
{
    uint64_t c = 0, b = 0;
    for (size_t i = 0; i <= leak_mask; i++) {
        c += leaks[i].count;
        b += leaks[i].bytes;
    }
    *count = c;
    *bytes = b + leaked_unattributed;
    *no_context = leaked_unattributed;
}

JP_NOINSTR void metrics_leaks_drop(void)
{
    free(leaks);
    leaks = NULL;
}
