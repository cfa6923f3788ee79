/* Record buffers: one mapping of size= bytes reserved at start (pages are
 * only touched as records fill them), cut into 16 KiB chunks that threads
 * take with one atomic add.  When none is left the cap is reached: one line
 * on stderr, and every thread stops writing (its lost events are counted). */
#include "hktrace.h"


static char *base;
static uint32_t nchunks;
static volatile uint32_t next_chunk;
volatile int ht_cap_reached;

HT_NOINSTR int ht_buffer_init(void)
{
    uint64_t size = ht_opt.size_bytes;
    if (size < HT_CHUNK_BYTES)
        size = HT_CHUNK_BYTES;
    nchunks = (uint32_t)(size / HT_CHUNK_BYTES);
    void *p = hk_pages_map((size_t)nchunks * HT_CHUNK_BYTES, HK_PAGES_RESERVE);
    if (!p)
        return -1;
    base = p;
    return 0;
}

HT_NOINSTR uint32_t ht_chunk_take(void)
{
    if (ht_cap_reached)
        return 0;
    uint32_t n = __atomic_fetch_add(&next_chunk, 1, __ATOMIC_RELAXED);
    if (n >= nchunks) {
        if (!__atomic_exchange_n(&ht_cap_reached, 1, __ATOMIC_RELAXED))
            ht_host->log("hktrace: trace size cap of %llu MB reached; recording stops here "
                         "(raise it with HKTRACEOPTS=size=MB, or use threshold= or depth=)",
                         (unsigned long long)(ht_opt.size_bytes >> 20));
        return 0;
    }
    struct ht_chunk *c = (struct ht_chunk *)(base + (size_t)n * HT_CHUNK_BYTES);
    c->next = 0;
    c->nrec = 0;
    return n + 1;
}

HT_NOINSTR struct ht_chunk *ht_chunk_at(uint32_t number_plus_1)
{
    return (struct ht_chunk *)(base + (size_t)(number_plus_1 - 1) * HT_CHUNK_BYTES);
}

HT_NOINSTR void ht_buffer_reset(void)
{
    next_chunk = 0;
    ht_cap_reached = 0;
}
