/* Function ids: a lock-free open-addressing table from address to slot; the
 * slot number is the id written in records.  Claiming a slot is one
 * compare-and-swap, so threads (and a signal handler interrupting one) never
 * wait for each other.  The table is reserved, not touched, at start. */
#include "hktrace.h"


static uint64_t *slots;
static volatile uint32_t used;

/* Claims stop at 7/8 full so that probes stay short and always end. */
#define MAX_USED (HT_FUNC_SLOTS / 8 * 7)

HT_NOINSTR int ht_funcs_init(void)
{
    void *p = hk_pages_map(HT_FUNC_SLOTS * sizeof *slots, HK_PAGES_RESERVE);
    if (!p)
        return -1;
    slots = p;
    return 0;
}

HT_NOINSTR uint32_t ht_func_id(uint64_t fn)
{
    uint32_t i = (uint32_t)((fn * 0x9e3779b97f4a7c15ull) >> (64 - HT_FUNC_BITS));
    for (;;) {
        uint64_t k = __atomic_load_n(&slots[i], __ATOMIC_RELAXED);
        if (HT_LIKELY(k == fn))
            return i;
        if (k == 0) {
            if (__atomic_load_n(&used, __ATOMIC_RELAXED) >= MAX_USED)
                return UINT32_MAX;
            if (__atomic_compare_exchange_n(&slots[i], &k, fn, 0, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED)) {
                __atomic_fetch_add(&used, 1, __ATOMIC_RELAXED);
                return i;
            }
            if (k == fn)        /* another thread claimed it for the same function */
                return i;
        }
        i = (i + 1) & (HT_FUNC_SLOTS - 1);
    }
}

HT_NOINSTR uint64_t ht_func_addr(uint32_t id)
{
    return id < HT_FUNC_SLOTS ? slots[id] : 0;
}

HT_NOINSTR uint32_t ht_funcs_used(void)
{
    return used;
}
