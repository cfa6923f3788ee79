/* The live-block table: address -> (size, allocating node), so frees find
 * their size and what was never freed is charged, at exit, to the context
 * that allocated it.  An open-addressing table keyed by address, in 64
 * stripes each under its own spinlock: a block may be freed by another
 * thread than the one that allocated it, and threads that touch different
 * stripes never wait for each other (one uncontended atomic exchange per
 * call).
 *
 * Insert and remove are here, inline, because they are most of an
 * allocation's cost and metrics_alloc.c calls them on every malloc and
 * free; growing, start, fork and the walk for leaks are in
 * metrics_blocks.c. */
#ifndef JPROF_METRICS_BLOCKS_H
#define JPROF_METRICS_BLOCKS_H

#include "metrics_internal.h"

#define METRICS_STRIPES 64
struct block {
    uintptr_t ptr; /* 0: empty */
    uint64_t size;
    arena_ref node;
    uint32_t epoch; /* metrics_block_epoch() when allocated */
};
struct stripe {
    volatile int lock;
    struct block *tab;
    size_t mask, count;
} __attribute__((aligned(64)));
extern struct stripe metrics_stripes[METRICS_STRIPES] __attribute__((visibility("hidden")));

/* Under the stripe's lock: a table twice the size (or the first one). */
int metrics_stripe_grow(struct stripe *s);
/* Blocks in the table (of every epoch): a size for the leak map. */
size_t metrics_blocks_count(void);
/* fn for every block of epoch, one stripe at a time under its lock. */
void metrics_blocks_each(uint32_t epoch, void (*fn)(const struct block *b, void *ctx), void *ctx);

static inline uint64_t metrics_hash_ptr(uintptr_t p)
{
    return (uint64_t)(p >> 4) * 0x9e3779b97f4a7c15ull;
}

/* The top bits choose the stripe, the middle ones the home slot: the two
 * stay independent. */
static inline struct stripe *metrics_stripe_of(uint64_t h)
{
    return &metrics_stripes[h >> 58];
}

static inline size_t metrics_home_of(uint64_t h, size_t mask)
{
    return (size_t)(h >> 20) & mask;
}

/* Record block p; returns the size of a tracked block that was already at
 * p (freed behind our back, never through free()), else 0. */
static inline uint64_t metrics_block_insert(uintptr_t p, uint64_t size, arena_ref node, uint32_t epoch)
{
    uint64_t h = metrics_hash_ptr(p), replaced = 0;
    struct stripe *s = metrics_stripe_of(h);
    hk_spin_lock(&s->lock);
    if (JP_UNLIKELY((s->count + 1) * 2 > s->mask + 1) && metrics_stripe_grow(s) != 0) {
        hk_spin_unlock(&s->lock);
        return 0;
    }
    struct block *tab = s->tab;
    size_t i = metrics_home_of(h, s->mask);
    while (tab[i].ptr && tab[i].ptr != p)
        i = (i + 1) & s->mask;
    if (JP_LIKELY(!tab[i].ptr))
        s->count++;
    else if (tab[i].epoch == epoch)
        replaced = tab[i].size;
    tab[i] = (struct block){ .ptr = p, .size = size, .node = node, .epoch = epoch };
    hk_spin_unlock(&s->lock);
    return replaced;
}

/* Backward-shift deletion of slot i keeps every probe chain unbroken. */
static inline void metrics_block_unlink(struct stripe *s, size_t i)
{
    struct block *tab = s->tab;
    size_t mask = s->mask, j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!tab[j].ptr)
            break;
        size_t k = metrics_home_of(metrics_hash_ptr(tab[j].ptr), mask);
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            tab[i] = tab[j];
            i = j;
        }
    }
    tab[i].ptr = 0;
    s->count--;
}

/* Remove p; its block in *out.  0 if found. */
static inline int metrics_block_remove(uintptr_t p, struct block *out)
{
    uint64_t h = metrics_hash_ptr(p);
    struct stripe *s = metrics_stripe_of(h);
    hk_spin_lock(&s->lock);
    struct block *tab = s->tab;
    if (JP_UNLIKELY(!tab)) {
        hk_spin_unlock(&s->lock);
        return -1;
    }
    size_t i = metrics_home_of(h, s->mask);
    while (tab[i].ptr && tab[i].ptr != p)
        i = (i + 1) & s->mask;
    if (JP_UNLIKELY(!tab[i].ptr)) {
        hk_spin_unlock(&s->lock);
        return -1;
    }
    *out = tab[i];
    metrics_block_unlink(s, i);
    hk_spin_unlock(&s->lock);
    return 0;
}

#endif
