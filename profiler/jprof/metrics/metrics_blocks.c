/* The live-block table's slow half (metrics_blocks.h has the hot one):
 * growing a stripe, the first tables, the fork child, the walk. */
#include "metrics_blocks.h"

#include <errno.h>
#include <sys/mman.h>

struct stripe metrics_stripes[METRICS_STRIPES];

/* noinline: keeps the rare path out of the inlined insert.  errno kept:
 * it runs inside the program's malloc. */
JP_NOINSTR __attribute__((noinline)) int metrics_stripe_grow(struct stripe *s)
{
    int saved = errno;
    size_t cap = s->tab ? (s->mask + 1) * 2 : 1024;
    struct block *tab =
        mmap(NULL, cap * sizeof *tab, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (tab == MAP_FAILED) {
        errno = saved;
        return -1;
    }
    struct block *old = s->tab;
    size_t old_cap = old ? s->mask + 1 : 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].ptr) {
            size_t j = metrics_home_of(metrics_hash_ptr(old[i].ptr), cap - 1);
            while (tab[j].ptr)
                j = (j + 1) & (cap - 1);
            tab[j] = old[i];
        }
    s->tab = tab;
    s->mask = cap - 1;
    if (old)
        munmap(old, old_cap * sizeof *old);
    errno = saved;
    return 0;
}

/* Every stripe gets its first table at start: the hot path never sees
 * a stripe without one. */
JP_NOINSTR void metrics_blocks_start(void)
{
    for (int i = 0; i < METRICS_STRIPES; i++)
        if (!metrics_stripes[i].tab && metrics_stripe_grow(&metrics_stripes[i]) != 0)
            metrics_stripes[i].mask = 0; /* (count + 1) * 2 > 1: every insert retries grow */
}

/* The blocks stay (the child owns a copy of the heap); a lock a vanished
 * thread held is let go. */
JP_NOINSTR void metrics_blocks_fork_child(void)
{
    for (int i = 0; i < METRICS_STRIPES; i++)
        metrics_stripes[i].lock = 0;
}

JP_NOINSTR size_t metrics_blocks_count(void)
{
    size_t n = 0;
    for (int i = 0; i < METRICS_STRIPES; i++)
        n += metrics_stripes[i].count;
    return n;
}

JP_NOINSTR void metrics_blocks_each(uint32_t epoch, void (*fn)(const struct block *b, void *ctx), void *ctx)
{
    for (int i = 0; i < METRICS_STRIPES; i++) {
        struct stripe *s = &metrics_stripes[i];
        hk_spin_lock(&s->lock);
        for (size_t k = 0; s->tab && k <= s->mask; k++)
            if (s->tab[k].ptr && s->tab[k].epoch == epoch)
                fn(&s->tab[k], ctx); /* not free, not from before a reset */
        hk_spin_unlock(&s->lock);
    }
}
