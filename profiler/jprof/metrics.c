/* libjprof's I/O and memory metrics (metrics.h).
 *
 * Events come from libhookit's wrappers (HOOKIT_EV_IO, _ALLOC, _FREE) in
 * the thread that made the call, with libhookit's per-thread guard held:
 * nothing here is re-entered by the calls it makes itself.
 *
 *  - Per calling context: an extension block (one arena slot) hangs off
 *    the calling thread's current node (arena_node.ext); only that thread
 *    writes it, like the node itself.
 *  - Per file: struct iostats (profile/iostats.h) per file record id, each
 *    under its own spinlock (threads may share a file).
 *  - Per interval: bytes read and written, and the highest live heap size,
 *    per io_interval (atomic adds into a reserved array).
 *  - Live blocks: a table of address -> (size, allocating node), in 64
 *    stripes each under a spinlock, so frees find their size and what was
 *    never freed is charged, at exit, to the context that allocated it.
 *
 * All memory here is mmap'ed: an ALLOC event runs inside the program's
 * malloc() and must not depend on it. */
#include "jprof.h"
#include "metrics.h"
#include "profile/iostats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

_Static_assert((int)IOSTATS_READ == (int)HOOKIT_IO_READ && (int)IOSTATS_WRITE == (int)HOOKIT_IO_WRITE &&
               (int)IOSTATS_MMAP == (int)HOOKIT_IO_MMAP && (int)IOSTATS_OPEN == (int)HOOKIT_IO_OPEN,
               "profile/iostats.h follows enum hookit_io_op");

/* ---- options ----------------------------------------------------------------------- */
static struct {
    int io, alloc;
    uint64_t interval_ns;
} mopt = { 1, 0, 1000000000ull };

JP_NOINSTR int jp_opt_io(const char *v) { (void)v; mopt.io = 1; return 0; }
JP_NOINSTR int jp_opt_noio(const char *v) { (void)v; mopt.io = 0; return 0; }
JP_NOINSTR int jp_opt_alloc(const char *v) { (void)v; mopt.alloc = 1; return 0; }

/* DURATION: a number with a unit ns, us, ms, s (a bare number is seconds). */
JP_NOINSTR int jp_opt_io_interval(const char *v)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || errno || x <= 0)
        return -1;
    double scale = !strcmp(end, "ns") ? 1 : !strcmp(end, "us") ? 1e3 : !strcmp(end, "ms") ? 1e6 :
                   (!strcmp(end, "s") || !*end) ? 1e9 : -1;
    if (scale < 0 || x * scale < 1000 || x * scale > 1e15)
        return -1;
    mopt.interval_ns = (uint64_t)(x * scale + 0.5);
    return 0;
}

/* ---- state ------------------------------------------------------------------------- */
static const struct hookit_host *host;
static uint64_t start_tick;
static double rate;                     /* ticks per ns, known at the first event */
static uint64_t interval_ticks;

#define MAX_FILES (1u << 18)
#define POOL_BYTES (64ull << 20)
#define MAX_INTERVALS (1u << 20)

struct jfile {
    volatile int lock;
    int used;
    const char *path;
    struct iostats s;
};
static struct jfile *files;
static uint32_t max_file;               /* highest id seen */
static char *pool;
static uint64_t pool_used;

struct interval {
    uint64_t bytes_read, bytes_written;
    uint64_t live_max;                  /* highest live heap bytes seen in it (+1: 0 = none) */
};
static struct interval *series;
static uint32_t last_interval;          /* highest index used */

/* The live heap is one number for the process (its peak is exact). */
static struct {
    int64_t live;
    uint64_t peak;
} total;

/* Everything else is counted per thread, without atomics, and summed when
 * a profile is written: the hot path takes one lock (the file's) for I/O,
 * one (the block table stripe's) and one atomic add for memory. */
struct mthread {
    struct mthread *next;
    uint64_t io_calls, bytes_read, bytes_written, io_ticks;
    uint64_t allocs, alloc_bytes, frees, free_bytes, untracked_frees;
    /* the I/O interval this thread is adding to, and what it added */
    uint32_t io_idx;
    uint64_t io_end;                    /* first tick after it (0: none yet) */
    uint64_t io_read, io_written;
    /* the heap interval: the highest live size already recorded in it */
    uint32_t mem_idx, nallocs;
    uint64_t mem_end, mem_max;
};
#define MAX_MTHREADS (1u << 16)
static struct mthread *mthreads;        /* reserved slab */
static uint32_t nmthreads;
static struct mthread *mthread_list;
static __thread struct mthread *mt_self __attribute__((tls_model("initial-exec")));

JP_NOINSTR static struct mthread *mthread_new(void)
{
    uint32_t i = __atomic_fetch_add(&nmthreads, 1, __ATOMIC_RELAXED);
    if (!mthreads || i >= MAX_MTHREADS)
        return NULL;
    struct mthread *m = &mthreads[i];
    struct mthread *head = __atomic_load_n(&mthread_list, __ATOMIC_RELAXED);
    do
        m->next = head;
    while (!__atomic_compare_exchange_n(&mthread_list, &head, m, 1, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED));
    return mt_self = m;
}

JP_NOINSTR static inline struct mthread *mthread(void)
{
    struct mthread *m = mt_self;
    return JP_LIKELY(m) ? m : mthread_new();
}

/* The per-context numbers: one arena slot per node that did I/O or allocated. */
struct node_ext {
    uint64_t io_calls, io_bytes_read, io_bytes_written, io_ticks;
    uint64_t allocs, alloc_bytes, frees, free_bytes;
};
_Static_assert(sizeof(struct node_ext) <= ARENA_SLOT, "one slot");

JP_NOINSTR static void *reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

JP_NOINSTR static void spin_lock(volatile int *l)
{
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(l, __ATOMIC_RELAXED))
            __builtin_ia32_pause();
}

JP_NOINSTR static void spin_unlock(volatile int *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

JP_NOINSTR static void atomic_max(uint64_t *at, uint64_t v)
{
    uint64_t cur = __atomic_load_n(at, __ATOMIC_RELAXED);
    while (v > cur && !__atomic_compare_exchange_n(at, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

JP_NOINSTR static void atomic_max32(uint32_t *at, uint32_t v)
{
    uint32_t cur = __atomic_load_n(at, __ATOMIC_RELAXED);
    while (v > cur && !__atomic_compare_exchange_n(at, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

#define ADD(field, v) __atomic_fetch_add(&(field), (v), __ATOMIC_RELAXED)

JP_NOINSTR static void ensure_rate(void)
{
    if (JP_LIKELY(rate > 0))
        return;
    double r = host->size >= sizeof *host && host->io_ticks_per_ns ? host->io_ticks_per_ns() : 1.0;
    uint64_t it = (uint64_t)((double)mopt.interval_ns * r);
    interval_ticks = it ? it : 1;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    rate = r;
}

JP_NOINSTR static uint32_t interval_of(uint64_t tick, uint64_t *end)
{
    uint64_t i = tick > start_tick ? (tick - start_tick) / interval_ticks : 0;
    uint32_t idx = i >= MAX_INTERVALS ? MAX_INTERVALS - 1 : (uint32_t)i;
    atomic_max32(&last_interval, idx);
    *end = start_tick + (i + 1) * interval_ticks;
    return idx;
}

/* The thread's pending bytes go into the shared series. */
JP_NOINSTR static void io_interval_flush(struct mthread *m)
{
    if (!series || (!m->io_read && !m->io_written))
        return;
    ADD(series[m->io_idx].bytes_read, m->io_read);
    ADD(series[m->io_idx].bytes_written, m->io_written);
    m->io_read = m->io_written = 0;
}

JP_NOINSTR static inline void io_interval_add(struct mthread *m, uint64_t tick, uint64_t rd,
                                              uint64_t wr)
{
    if (JP_UNLIKELY(tick >= m->io_end)) {
        io_interval_flush(m);
        m->io_idx = interval_of(tick, &m->io_end);
    }
    m->io_read += rd;
    m->io_written += wr;
}

/* The calling thread's current node's extension block, made on first use. */
JP_NOINSTR static struct node_ext *current_ext(void)
{
    struct jp_thread *t = jp_self;
    if (!t || jp_busy(t))
        return NULL;
    struct arena_node *n = jp_node(jp_cur(t));
    arena_ref e = n->ext;
    if (!e) {
        e = jp_arena_alloc(1);
        if (!e)
            return NULL;
        memset(jp_at(e), 0, ARENA_SLOT);
        __atomic_store_n(&n->ext, e, __ATOMIC_RELEASE);
    }
    return jp_at(e);
}

/* ---- I/O ------------------------------------------------------------------------------ */
JP_NOINSTR static const char *pool_copy(const char *s)
{
    size_t len = strlen(s) + 1;
    uint64_t at = __atomic_fetch_add(&pool_used, (len + 7) & ~7ull, __ATOMIC_RELAXED);
    if (at + len > POOL_BYTES)
        return NULL;
    memcpy(pool + at, s, len);
    return pool + at;
}

JP_NOINSTR static void account_file(const struct hookit_io *io)
{
    if (!files || !io->file || io->file >= MAX_FILES)
        return;
    struct jfile *f = &files[io->file];
    int failed = (io->flags & HOOKIT_IOF_FAILED) != 0;
    spin_lock(&f->lock);
    if (!f->used) {
        iostats_init(&f->s);
        f->path = io->path ? pool_copy(io->path) : NULL;
        f->used = 1;
    }
    iostats_account(&f->s, io->op, failed, io->bytes, io->offset,
                    io->t0 - start_tick, io->t1 - start_tick);
    spin_unlock(&f->lock);
    atomic_max32(&max_file, io->file);
}

JP_NOINSTR static void on_io(const struct hookit_io *io)
{
    ensure_rate();
    int ok = !(io->flags & HOOKIT_IOF_FAILED);
    uint64_t rd = ok && io->op == HOOKIT_IO_READ ? io->bytes : 0;
    uint64_t wr = ok && io->op == HOOKIT_IO_WRITE ? io->bytes : 0;
    uint64_t dt = io->t1 > io->t0 ? io->t1 - io->t0 : 0;
    struct node_ext *x = current_ext();
    if (x) {
        x->io_calls++;
        x->io_bytes_read += rd;
        x->io_bytes_written += wr;
        x->io_ticks += dt;
    }
    struct mthread *m = mthread();
    if (m) {
        m->io_calls++;
        m->bytes_read += rd;
        m->bytes_written += wr;
        m->io_ticks += dt;
        if (rd || wr)
            io_interval_add(m, io->t1, rd, wr);
    }
    account_file(io);
}

/* ---- live blocks --------------------------------------------------------------------- */
#define STRIPES 64
struct block {
    uintptr_t ptr;                      /* 0: empty */
    uint64_t size;
    arena_ref node;
    uint32_t pad;
};
struct stripe {
    volatile int lock;
    struct block *tab;
    size_t mask, count;
} __attribute__((aligned(64)));
static struct stripe stripes[STRIPES];

JP_NOINSTR static inline uint64_t hash_ptr(uintptr_t p)
{
    return (uint64_t)(p >> 4) * 0x9e3779b97f4a7c15ull;
}

JP_NOINSTR static inline struct stripe *stripe_of(uint64_t h)
{
    return &stripes[h >> 58];
}

JP_NOINSTR static inline size_t home(const struct stripe *s, uintptr_t p)
{
    return (size_t)(hash_ptr(p) >> 20) & s->mask;
}

/* Under the stripe's lock: a table twice the size (or the first one). */
JP_NOINSTR static int grow(struct stripe *s)
{
    size_t cap = s->tab ? (s->mask + 1) * 2 : 1024;
    struct block *tab = mmap(NULL, cap * sizeof *tab, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (tab == MAP_FAILED)
        return -1;
    struct block *old = s->tab;
    size_t old_cap = old ? s->mask + 1 : 0;
    s->tab = tab;
    s->mask = cap - 1;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].ptr) {
            size_t j = home(s, old[i].ptr);
            while (tab[j].ptr)
                j = (j + 1) & s->mask;
            tab[j] = old[i];
        }
    if (old)
        munmap(old, old_cap * sizeof *old);
    return 0;
}

JP_NOINSTR static void block_insert(uintptr_t p, uint64_t size, arena_ref node)
{
    struct stripe *s = stripe_of(hash_ptr(p));
    spin_lock(&s->lock);
    if (((s->count + 1) * 2 > s->mask + 1 || !s->tab) && grow(s) != 0) {
        spin_unlock(&s->lock);
        return;
    }
    size_t i = home(s, p);
    while (s->tab[i].ptr && s->tab[i].ptr != p)
        i = (i + 1) & s->mask;
    if (!s->tab[i].ptr)
        s->count++;
    else    /* freed behind our back (never through free()): replaced */
        ADD(total.live, -(int64_t)s->tab[i].size);
    s->tab[i] = (struct block){ .ptr = p, .size = size, .node = node };
    spin_unlock(&s->lock);
}

/* Remove p; its block in *out.  0 if found. */
JP_NOINSTR static int block_remove(uintptr_t p, struct block *out)
{
    struct stripe *s = stripe_of(hash_ptr(p));
    spin_lock(&s->lock);
    if (!s->tab) {
        spin_unlock(&s->lock);
        return -1;
    }
    size_t i = home(s, p);
    while (s->tab[i].ptr && s->tab[i].ptr != p)
        i = (i + 1) & s->mask;
    if (!s->tab[i].ptr) {
        spin_unlock(&s->lock);
        return -1;
    }
    *out = s->tab[i];
    /* Backward-shift deletion keeps every probe chain unbroken. */
    size_t j = i;
    for (;;) {
        j = (j + 1) & s->mask;
        if (!s->tab[j].ptr)
            break;
        size_t k = home(s, s->tab[j].ptr);
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            s->tab[i] = s->tab[j];
            i = j;
        }
    }
    s->tab[i].ptr = 0;
    s->count--;
    spin_unlock(&s->lock);
    return 0;
}

JP_NOINSTR static void on_alloc(const struct hookit_mem *m)
{
    ensure_rate();
    struct jp_thread *t = jp_self;
    arena_ref node = t ? jp_cur(t) : 0;
    block_insert((uintptr_t)m->ptr, m->size, node);
    struct node_ext *x = current_ext();
    if (x) {
        x->allocs++;
        x->alloc_bytes += m->size;
    }
    int64_t live = ADD(total.live, (int64_t)m->size) + (int64_t)m->size;
    if (live > 0 && (uint64_t)live > __atomic_load_n(&total.peak, __ATOMIC_RELAXED))
        atomic_max(&total.peak, (uint64_t)live);
    struct mthread *mt = mthread();
    if (!mt)
        return;
    mt->allocs++;
    mt->alloc_bytes += m->size;
    /* The heap series: the clock is read on a new high for this thread's
     * interval, or every 32 allocations (to notice a new interval). */
    if (series && live > 0 && ((uint64_t)live > mt->mem_max || (++mt->nallocs & 31) == 0)) {
        uint64_t tick = host->io_now();
        if (tick >= mt->mem_end) {
            mt->mem_idx = interval_of(tick, &mt->mem_end);
            mt->mem_max = 0;
        }
        if ((uint64_t)live > mt->mem_max) {
            mt->mem_max = (uint64_t)live;
            atomic_max(&series[mt->mem_idx].live_max, (uint64_t)live + 1);
        }
    }
}

JP_NOINSTR static void on_free(const struct hookit_mem *m)
{
    struct block b;
    struct mthread *mt = mthread();
    if (block_remove((uintptr_t)m->ptr, &b) != 0) {
        if (mt)
            mt->untracked_frees++;
        return;
    }
    struct node_ext *x = current_ext();
    if (x) {
        x->frees++;
        x->free_bytes += b.size;
    }
    if (mt) {
        mt->frees++;
        mt->free_bytes += b.size;
    }
    ADD(total.live, -(int64_t)b.size);
}

/* ---- plugin entry points ------------------------------------------------------------------ */
JP_NOINSTR uint32_t jp_metrics_start(const struct hookit_host *h)
{
    host = h;
    if (h->size < sizeof *h || !h->io_now)
        return 0;               /* an older libhookit without the wrappers */
    start_tick = h->io_now();
    if (!mopt.io && !mopt.alloc)
        return 0;
    if (!files) {
        files = reserve((size_t)MAX_FILES * sizeof *files);
        pool = reserve(POOL_BYTES);
        series = reserve((size_t)MAX_INTERVALS * sizeof *series);
        mthreads = reserve((size_t)MAX_MTHREADS * sizeof *mthreads);
        if (!pool)
            files = NULL;
    }
    return (mopt.io ? HOOKIT_CAP_IO : 0) | (mopt.alloc ? HOOKIT_CAP_ALLOC : 0);
}

JP_NOINSTR void jp_metrics_event(const struct hookit_event *ev)
{
    switch (ev->type) {
    case HOOKIT_EV_IO:
        if (ev->io)
            on_io(ev->io);
        break;
    case HOOKIT_EV_ALLOC:
        if (ev->mem)
            on_alloc(ev->mem);
        break;
    case HOOKIT_EV_FREE:
        if (ev->mem)
            on_free(ev->mem);
        break;
    default:
        break;
    }
}

/* The child's profile holds what the child did: counters restart (live
 * blocks stay: the child owns a copy of the heap). */
JP_NOINSTR void jp_metrics_fork_child(void)
{
    if (!host || host->size < sizeof *host || !host->io_now)
        return;
    start_tick = host->io_now();
    if (files)
        memset(files, 0, (size_t)(max_file + 1) * sizeof *files);
    if (series)
        memset(series, 0, (size_t)(last_interval + 1) * sizeof *series);
    max_file = last_interval = 0;
    for (struct mthread *m = mthread_list; m; m = m->next) {
        struct mthread *next = m->next;
        memset(m, 0, sizeof *m);
        m->next = next;
    }
    total.peak = total.live > 0 ? (uint64_t)total.live : 0;
    for (int i = 0; i < STRIPES; i++)
        stripes[i].lock = 0;
}

/* ---- output ----------------------------------------------------------------------------------- */
/* What was never freed, per allocating node: an open-addressing map built
 * once per profile (jp_metrics_thread's first call), dropped by
 * jp_metrics_process. */
struct leak {
    arena_ref node;
    uint64_t count, bytes;
};
static struct leak *leaks;
static size_t leak_mask;
static uint64_t leaked_unattributed;

JP_NOINSTR static struct leak *leak_slot(arena_ref node)
{
    size_t i = (size_t)(node * 0x9e3779b1u) & leak_mask;
    while (leaks[i].node && leaks[i].node != node)
        i = (i + 1) & leak_mask;
    return &leaks[i];
}

JP_NOINSTR static int build_leaks(void)
{
    size_t live = 0;
    for (int i = 0; i < STRIPES; i++)
        live += stripes[i].count;
    size_t cap = 64;
    while (cap < live * 2 + 2)
        cap *= 2;
    leaks = calloc(cap, sizeof *leaks);
    if (!leaks)
        return -1;
    leak_mask = cap - 1;
    leaked_unattributed = 0;
    for (int i = 0; i < STRIPES; i++) {
        struct stripe *s = &stripes[i];
        spin_lock(&s->lock);
        for (size_t k = 0; s->tab && k <= s->mask; k++) {
            if (!s->tab[k].ptr)
                continue;
            if (!s->tab[k].node) {
                leaked_unattributed += s->tab[k].size;
                continue;
            }
            struct leak *l = leak_slot(s->tab[k].node);
            l->node = s->tab[k].node;
            l->count++;
            l->bytes += s->tab[k].size;
        }
        spin_unlock(&s->lock);
    }
    return 0;
}

JP_NOINSTR static struct prof_metric *add_column(struct profile *p, struct prof_thread *th,
                                                 const char *name, uint32_t n)
{
    struct prof_metric *m = &th->metrics[th->nmetrics];
    m->name = profile_intern(p, name);
    m->values = profile_alloc(p, (size_t)n * sizeof *m->values + 1);
    if (!m->name || !m->values)
        return NULL;
    th->nmetrics++;
    return m;
}

enum { COL_IO_CALLS, COL_IO_READ, COL_IO_WRITTEN, COL_IO_NS, COL_IO_END = 4 };
enum { COL_ALLOCS, COL_ALLOC_BYTES, COL_FREES, COL_FREE_BYTES, COL_LEAKS, COL_LEAK_BYTES, COL_ALLOC_END };
static const char *const io_cols[] = { "io_calls", "io_bytes_read", "io_bytes_written", "io_ns" };
static const char *const alloc_cols[] = { "alloc_calls", "alloc_bytes", "free_calls", "free_bytes",
                                          "leak_count", "leak_bytes" };

JP_NOINSTR int jp_metrics_thread(struct profile *p, struct prof_thread *th,
                                 const struct arena_copy_node *nodes, uint32_t n)
{
    if (!host || !(mopt.io || mopt.alloc) || host->size < sizeof *host || !host->io_now)
        return 0;
    double r = rate > 0 ? rate : 1.0;
    if (mopt.alloc && !leaks && build_leaks() != 0)
        return -1;
    uint32_t want = (mopt.io ? COL_IO_END : 0) + (mopt.alloc ? COL_ALLOC_END : 0);
    struct prof_metric *old = th->metrics;
    th->metrics = profile_alloc(p, (th->nmetrics + want) * sizeof *th->metrics);
    if (!th->metrics)
        return -1;
    if (old)
        memcpy(th->metrics, old, th->nmetrics * sizeof *old);
    uint64_t *io[COL_IO_END] = { 0 }, *al[COL_ALLOC_END] = { 0 };
    for (int c = 0; mopt.io && c < COL_IO_END; c++) {
        struct prof_metric *m = add_column(p, th, io_cols[c], n);
        if (!m)
            return -1;
        io[c] = m->values;
    }
    for (int c = 0; mopt.alloc && c < COL_ALLOC_END; c++) {
        struct prof_metric *m = add_column(p, th, alloc_cols[c], n);
        if (!m)
            return -1;
        al[c] = m->values;
    }
    for (uint32_t i = 0; i < n; i++) {
        const struct arena_node *node = jp_node(nodes[i].ref);
        arena_ref e = __atomic_load_n(&node->ext, __ATOMIC_ACQUIRE);
        if (e) {
            const struct node_ext *x = jp_at(e);
            if (mopt.io) {
                io[COL_IO_CALLS][i] = x->io_calls;
                io[COL_IO_READ][i] = x->io_bytes_read;
                io[COL_IO_WRITTEN][i] = x->io_bytes_written;
                io[COL_IO_NS][i] = (uint64_t)((double)x->io_ticks / r + 0.5);
            }
            if (mopt.alloc) {
                al[COL_ALLOCS][i] = x->allocs;
                al[COL_ALLOC_BYTES][i] = x->alloc_bytes;
                al[COL_FREES][i] = x->frees;
                al[COL_FREE_BYTES][i] = x->free_bytes;
            }
        }
        if (mopt.alloc) {
            struct leak *l = leak_slot(nodes[i].ref);
            if (l->node) {
                al[COL_LEAKS][i] = l->count;
                al[COL_LEAK_BYTES][i] = l->bytes;
            }
        }
    }
    return 0;
}

JP_NOINSTR static int set_u64(struct profile *p, const char *key, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return profile_set_meta(p, key, buf);
}

/* "INDEX VALUE..." lines for the intervals that saw something. */
JP_NOINSTR static int set_series(struct profile *p, int memory)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return -1;
    for (uint32_t i = 0; series && i <= last_interval; i++) {
        const struct interval *iv = &series[i];
        if (memory && iv->live_max)
            fprintf(f, "%" PRIu32 " %" PRIu64 "\n", i, iv->live_max - 1);
        else if (!memory && (iv->bytes_read || iv->bytes_written))
            fprintf(f, "%" PRIu32 " %" PRIu64 " %" PRIu64 "\n", i, iv->bytes_read, iv->bytes_written);
    }
    if (fclose(f) != 0)
        return -1;
    int rc = profile_set_meta(p, memory ? "alloc_series" : "io_series", buf);
    free(buf);
    return rc;
}

JP_NOINSTR static int set_files(struct profile *p, double r)
{
    uint32_t n = 0;
    for (uint32_t id = 1; files && id <= max_file; id++)
        n += files[id].used;
    struct iostats_row *rows = calloc(n + 1, sizeof *rows);
    if (!rows)
        return -1;
    uint32_t k = 0;
    for (uint32_t id = 1; files && id <= max_file && k < n; id++) {
        struct jfile *f = &files[id];
        if (!f->used)
            continue;
        spin_lock(&f->lock);
        rows[k].id = id;
        rows[k].path = f->path ? f->path : "";
        rows[k].s = f->s;
        spin_unlock(&f->lock);
        k++;
    }
    char *text = iostats_format(rows, k, r);
    free(rows);
    if (!text)
        return -1;
    int rc = profile_set_meta(p, "io_files", text);
    free(text);
    return rc;
}

/* Every thread's counters added up (pending interval bytes flushed:
 * the other threads have ended or are not in the middle of an update that
 * matters for a snapshot). */
JP_NOINSTR static struct mthread sum_threads(void)
{
    struct mthread sum = { 0 };
    for (struct mthread *m = __atomic_load_n(&mthread_list, __ATOMIC_ACQUIRE); m; m = m->next) {
        io_interval_flush(m);
        sum.io_calls += m->io_calls;
        sum.bytes_read += m->bytes_read;
        sum.bytes_written += m->bytes_written;
        sum.io_ticks += m->io_ticks;
        sum.allocs += m->allocs;
        sum.alloc_bytes += m->alloc_bytes;
        sum.frees += m->frees;
        sum.free_bytes += m->free_bytes;
        sum.untracked_frees += m->untracked_frees;
    }
    return sum;
}

JP_NOINSTR int jp_metrics_process(struct profile *p)
{
    if (!host || !(mopt.io || mopt.alloc) || host->size < sizeof *host || !host->io_now)
        return 0;
    double r = host->io_ticks_per_ns();
    if (rate <= 0)
        ensure_rate();
    struct mthread sum = sum_threads();
    int rc = set_u64(p, "io_interval_ns", mopt.interval_ns);
    if (mopt.io) {
        rc |= set_u64(p, "io_calls", sum.io_calls);
        rc |= set_u64(p, "io_bytes_read", sum.bytes_read);
        rc |= set_u64(p, "io_bytes_written", sum.bytes_written);
        rc |= set_u64(p, "io_ns", (uint64_t)((double)sum.io_ticks / r + 0.5));
        rc |= set_files(p, r);
        rc |= set_series(p, 0);
    }
    if (mopt.alloc) {
        if (!leaks && build_leaks() != 0)
            return -1;
        uint64_t leak_count = 0, leak_bytes = 0;
        for (size_t i = 0; i <= leak_mask; i++) {
            leak_count += leaks[i].count;
            leak_bytes += leaks[i].bytes;
        }
        rc |= set_u64(p, "alloc_calls", sum.allocs);
        rc |= set_u64(p, "alloc_bytes", sum.alloc_bytes);
        rc |= set_u64(p, "free_calls", sum.frees);
        rc |= set_u64(p, "free_bytes", sum.free_bytes);
        rc |= set_u64(p, "free_untracked", sum.untracked_frees);
        rc |= set_u64(p, "alloc_peak_bytes", total.peak);
        rc |= set_u64(p, "alloc_live_bytes", total.live > 0 ? (uint64_t)total.live : 0);
        rc |= set_u64(p, "leak_count", leak_count);
        rc |= set_u64(p, "leak_bytes", leak_bytes + leaked_unattributed);
        rc |= set_u64(p, "leak_bytes_no_context", leaked_unattributed);
        rc |= set_series(p, 1);
        free(leaks);
        leaks = NULL;
    }
    return rc ? -1 : 0;
}
