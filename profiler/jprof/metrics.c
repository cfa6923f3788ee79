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
#include "profile/arena_walk.h"
#include "profile/iostats.h"

#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

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
static uint64_t start_tick;             /* host->io_now() at start: slice 0 of the I/O series */
static uint64_t start_coarse;           /* coarse_ns() at the same moment: slice 0 of the heap series */
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

/* Bumped by reset and zerobase (jp_metrics_control): a thread that sees a
 * new value drops what it had not yet added to the series. */
static uint32_t series_epoch;

/* The live heap: each thread keeps what it allocated minus what it freed
 * in its own batch (mthread.live_delta) and adds the batch to the process
 * total when it passes LIVE_BATCH either way, so threads do not share a
 * counter on every call.  A thread checks the peak against the total plus
 * its own batch: exact while one thread allocates, and within LIVE_BATCH
 * per other running thread otherwise (an ending thread adds its batch:
 * mthread_ended). */
#define LIVE_BATCH (64 << 10)
static struct {
    int64_t pub;                        /* the batches added so far */
    int64_t base;                       /* pub + every batch at the last reset: blocks of
                                         * before are no longer tracked */
    uint64_t peak;                      /* highest live bytes seen */
    uint32_t block_epoch;               /* bumped by reset: older blocks are untracked */
} heap __attribute__((aligned(64)));

/* What a thread counts, without atomics; added up when a profile is written.
 * reset and zerobase copy the counts into the base, which is subtracted. */
struct mcounts {
    uint64_t io_calls, bytes_read, bytes_written, io_ticks;
    uint64_t allocs, alloc_bytes, frees, free_bytes, untracked_frees;
};

/* Everything else is counted per thread, without atomics, and summed when
 * a profile is written: the hot path takes one lock (the file's) for I/O,
 * one (the block table stripe's) for memory. */
struct mthread {
    struct mthread *next;
    struct mcounts c, base;
    /* the calling context of the last event and its extension block */
    arena_ref ctx_node;
    struct node_ext *ctx_ext;
    int64_t live_delta;                 /* this thread's batch of the live heap */
    int64_t batch;                      /* added to the total when it passes this
                                         * (LIVE_BATCH; 0 once the thread ends) */
    uint32_t nallocs;
    uint32_t epoch;                     /* series_epoch when the fields below were set */
    /* the I/O interval this thread is adding to, and what it added */
    uint32_t io_idx;
    uint64_t io_end;                    /* first tick after it (0: none yet) */
    uint64_t io_read, io_written;
    /* the heap interval (coarse ns) and the highest live size recorded in it */
    uint32_t mem_idx;
    uint64_t mem_end, mem_max;
};
#define MAX_MTHREADS (1u << 16)
static struct mthread *mthreads;        /* reserved slab */
static uint32_t nmthreads;
static struct mthread *mthread_list;
static __thread struct mthread *mt_self __attribute__((tls_model("initial-exec")));

/* A thread's batch of the live heap must not outlive it (a program running
 * through many threads would leave their batches out of the total the
 * others compare with the peak): a thread-specific key's destructor adds
 * it when the thread ends, and from then on every call is added at once
 * (what runs later in the ending thread: other destructors). */
static pthread_key_t end_key;
static int end_key_made;

JP_NOINSTR static void live_publish(struct mthread *m);

JP_NOINSTR static void mthread_ended(void *arg)
{
    struct mthread *m = arg;
    m->batch = 0;
    live_publish(m);
}

JP_NOINSTR __attribute__((noinline)) static struct mthread *mthread_new(void)
{
    uint32_t i = __atomic_fetch_add(&nmthreads, 1, __ATOMIC_RELAXED);
    if (!mthreads || i >= MAX_MTHREADS)
        return NULL;
    struct mthread *m = &mthreads[i];
    m->epoch = __atomic_load_n(&series_epoch, __ATOMIC_RELAXED);
    m->batch = LIVE_BATCH;
    if (end_key_made)
        pthread_setspecific(end_key, m);
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
    return JP_LIKELY(m != NULL) ? m : mthread_new();
}


JP_NOINSTR static void *reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
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

/* The time stamps of the heap series: CLOCK_MONOTONIC_COARSE (the kernel's
 * tick, 1 to 4 ms; a few ns to read, no TSC), read on a new high of the
 * thread's slice and every 32 allocations, never per call. */
JP_NOINSTR static uint64_t coarse_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The slice of the series at t (from t0, slices of width), and where it ends. */
JP_NOINSTR static uint32_t slice_of(uint64_t t, uint64_t t0, uint64_t width, uint64_t *end)
{
    uint64_t i = t > t0 ? (t - t0) / width : 0;
    uint32_t idx = i >= MAX_INTERVALS ? MAX_INTERVALS - 1 : (uint32_t)i;
    atomic_max32(&last_interval, idx);
    *end = t0 + (i + 1) * width;
    return idx;
}

/* After reset/zerobase: what the thread had not yet added to the series
 * belongs to before, and its slices start again. */
JP_NOINSTR static void series_catch_up(struct mthread *m, uint32_t epoch)
{
    m->io_read = m->io_written = 0;
    m->io_end = 0;
    m->mem_end = 0;
    m->mem_max = 0;
    m->epoch = epoch;
}

/* The thread's pending bytes go into the shared series. */
JP_NOINSTR static void io_interval_flush(struct mthread *m)
{
    if (!series || (!m->io_read && !m->io_written))
        return;
    if (m->epoch != __atomic_load_n(&series_epoch, __ATOMIC_RELAXED))
        return;                 /* from before a reset/zerobase */
    ADD(series[m->io_idx].bytes_read, m->io_read);
    ADD(series[m->io_idx].bytes_written, m->io_written);
    m->io_read = m->io_written = 0;
}

JP_NOINSTR static inline void io_interval_add(struct mthread *m, uint64_t tick, uint64_t rd,
                                              uint64_t wr)
{
    uint32_t epoch = __atomic_load_n(&series_epoch, __ATOMIC_RELAXED);
    if (JP_UNLIKELY(m->epoch != epoch))
        series_catch_up(m, epoch);
    if (JP_UNLIKELY(tick >= m->io_end)) {
        io_interval_flush(m);
        m->io_idx = slice_of(tick, start_tick, interval_ticks, &m->io_end);
    }
    m->io_read += rd;
    m->io_written += wr;
}

/* ---- the calling context ------------------------------------------------------------ */
/* The calling thread's current node, 0 when it has none or is inside the
 * profiler's own hook (a signal handler).  The one place that knows where
 * jp_thread keeps it.  A reset or zerobase given while the thread was
 * blocked is applied first: an I/O call right after the wait (before any
 * hook) belongs to the tree after it. */
JP_NOINSTR static inline arena_ref context_node(struct jp_thread *t)
{
    if (t && JP_UNLIKELY(jp_pending(t->rec)))
        jp_pending_settle(t);
    return t && !jp_busy(t) ? jp_cur(t) : 0;
}

/* node's extension block, made on first use (only the node's own thread
 * makes it); NULL for no node or a full arena. */
JP_NOINSTR __attribute__((noinline)) static struct node_ext *ext_of(arena_ref node)
{
    if (!node)
        return NULL;
    struct arena_node *n = jp_node(node);
    arena_ref e = n->ext;
    if (!e) {
        int saved = errno;
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
    return ext_of(node);
}

/* The same, through the thread's cache of its last context: consecutive
 * events from one context (a loop) skip the node. */
JP_NOINSTR static inline struct node_ext *context_ext(struct mthread *m, arena_ref node)
{
    if (JP_LIKELY(node == m->ctx_node))
        return m->ctx_ext;
    struct node_ext *x = ext_of(node);
    if (x || !node) {
        m->ctx_node = node;
        m->ctx_ext = x;
    }
    return x;
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
    hk_spin_lock(&f->lock);
    if (!f->used) {
        iostats_init(&f->s);
        if (!f->path && io->path)
            f->path = pool_copy(io->path);
        f->used = 1;
    }
    iostats_account(&f->s, io->op, failed, io->bytes, io->offset,
                    io->t0 - start_tick, io->t1 - start_tick);
    hk_spin_unlock(&f->lock);
    atomic_max32(&max_file, io->file);
}

JP_NOINSTR static void on_io(const struct hookit_io *io)
{
    ensure_rate();
    int ok = !(io->flags & HOOKIT_IOF_FAILED);
    uint64_t rd = ok && io->op == HOOKIT_IO_READ ? io->bytes : 0;
    uint64_t wr = ok && io->op == HOOKIT_IO_WRITE ? io->bytes : 0;
    uint64_t dt = io->t1 > io->t0 ? io->t1 - io->t0 : 0;
    struct mthread *m = mthread();
    arena_ref node = context_node(jp_self_live());
    struct node_ext *x = m ? context_ext(m, node) : ext_of(node);
    if (x) {
        x->io_calls++;
        x->io_bytes_read += rd;
        x->io_bytes_written += wr;
        x->io_ticks += dt;
    }
    if (m) {
        m->c.io_calls++;
        m->c.bytes_read += rd;
        m->c.bytes_written += wr;
        m->c.io_ticks += dt;
        if (rd || wr)
            io_interval_add(m, io->t1, rd, wr);
    }
    account_file(io);
}

/* ---- live blocks --------------------------------------------------------------------- */
/* address -> (size, allocating node), so frees find their size and what was
 * never freed is charged, at exit, to the context that allocated it.  An
 * open-addressing table keyed by address, in 64 stripes each under its own
 * spinlock: a block may be freed by another thread than the one that
 * allocated it, and threads that touch different stripes never wait for
 * each other (one uncontended atomic exchange per call). */
#define STRIPES 64
struct block {
    uintptr_t ptr;                      /* 0: empty */
    uint64_t size;
    arena_ref node;
    uint32_t epoch;                     /* heap.block_epoch when allocated */
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

JP_NOINSTR static inline size_t home_of(uint64_t h, size_t mask)
{
    return (size_t)(h >> 20) & mask;
}

/* Under the stripe's lock: a table twice the size (or the first one). */
JP_NOINSTR __attribute__((noinline)) static int grow(struct stripe *s)
{
    int saved = errno;
    size_t cap = s->tab ? (s->mask + 1) * 2 : 1024;
    struct block *tab = mmap(NULL, cap * sizeof *tab, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (tab == MAP_FAILED) {
        errno = saved;
        return -1;
    }
    struct block *old = s->tab;
    size_t old_cap = old ? s->mask + 1 : 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].ptr) {
            size_t j = home_of(hash_ptr(old[i].ptr), cap - 1);
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

/* Record block p; returns the size of a tracked block that was already at
 * p (freed behind our back, never through free()), else 0. */
JP_NOINSTR static inline uint64_t block_insert(uintptr_t p, uint64_t size, arena_ref node,
                                               uint32_t epoch)
{
    uint64_t h = hash_ptr(p), replaced = 0;
    struct stripe *s = stripe_of(h);
    hk_spin_lock(&s->lock);
    if (JP_UNLIKELY((s->count + 1) * 2 > s->mask + 1) && grow(s) != 0) {
        hk_spin_unlock(&s->lock);
        return 0;
    }
    struct block *tab = s->tab;
    size_t i = home_of(h, s->mask);
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

/* Remove p; its block in *out.  0 if found. */
JP_NOINSTR static inline int block_remove(uintptr_t p, struct block *out)
{
    uint64_t h = hash_ptr(p);
    struct stripe *s = stripe_of(h);
    hk_spin_lock(&s->lock);
    struct block *tab = s->tab;
    if (JP_UNLIKELY(!tab)) {
        hk_spin_unlock(&s->lock);
        return -1;
    }
    size_t mask = s->mask;
    size_t i = home_of(h, mask);
    while (tab[i].ptr && tab[i].ptr != p)
        i = (i + 1) & mask;
    if (JP_UNLIKELY(!tab[i].ptr)) {
        hk_spin_unlock(&s->lock);
        return -1;
    }
    *out = tab[i];
    /* Backward-shift deletion keeps every probe chain unbroken. */
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!tab[j].ptr)
            break;
        size_t k = home_of(hash_ptr(tab[j].ptr), mask);
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            tab[i] = tab[j];
            i = j;
        }
    }
    tab[i].ptr = 0;
    s->count--;
    hk_spin_unlock(&s->lock);
    return 0;
}

/* Every stripe gets its first table at start: the hot path never sees
 * a stripe without one. */
JP_NOINSTR static void blocks_init(void)
{
    for (int i = 0; i < STRIPES; i++)
        if (!stripes[i].tab && grow(&stripes[i]) != 0)
            stripes[i].mask = 0;        /* (count + 1) * 2 > 1: every insert retries grow */
}

/* ---- the live heap ------------------------------------------------------------------- */
JP_NOINSTR __attribute__((noinline)) static void live_publish(struct mthread *m)
{
    ADD(heap.pub, m->live_delta);
    m->live_delta = 0;
}

/* Live bytes now, every thread's batch included (when writing a profile). */
JP_NOINSTR static int64_t live_now(void)
{
    int64_t live = __atomic_load_n(&heap.pub, __ATOMIC_RELAXED);
    for (struct mthread *m = __atomic_load_n(&mthread_list, __ATOMIC_ACQUIRE); m; m = m->next)
        live += __atomic_load_n(&m->live_delta, __ATOMIC_RELAXED);
    return live - heap.base;
}

/* A new high of the thread's heap slice, or the periodic look at the clock:
 * into the heap series. */
JP_NOINSTR __attribute__((noinline)) static void heap_series(struct mthread *m, int64_t live)
{
    uint32_t epoch = __atomic_load_n(&series_epoch, __ATOMIC_RELAXED);
    if (JP_UNLIKELY(m->epoch != epoch))
        series_catch_up(m, epoch);
    if (!series || live <= 0)
        return;
    int saved = errno;
    uint64_t now = coarse_ns();
    errno = saved;
    if (now >= m->mem_end) {
        m->mem_idx = slice_of(now, start_coarse, mopt.interval_ns, &m->mem_end);
        m->mem_max = 0;
    }
    if ((uint64_t)live > m->mem_max) {
        m->mem_max = (uint64_t)live;
        atomic_max(&series[m->mem_idx].live_max, (uint64_t)live + 1);
    }
}

/* ---- memory: the plugin's direct entry points (include/hookit/profiler.h) ---------------- */
/* A thread past MAX_MTHREADS: no per-thread counts, the block and the live
 * heap still kept. */
JP_NOINSTR __attribute__((noinline)) static void alloc_no_thread(uintptr_t p, uint64_t size)
{
    uint32_t epoch = __atomic_load_n(&heap.block_epoch, __ATOMIC_RELAXED);
    struct node_ext *x = ext_of(context_node(jp_self_live()));
    if (x) {
        x->allocs++;
        x->alloc_bytes += size;
    }
    uint64_t replaced = block_insert(p, size, context_node(jp_self_live()), epoch);
    int64_t live = ADD(heap.pub, (int64_t)(size - replaced)) + (int64_t)(size - replaced) - heap.base;
    if (live > 0)
        atomic_max(&heap.peak, (uint64_t)live);
}

JP_NOINSTR __attribute__((noinline)) static void free_no_thread(uint64_t size)
{
    struct node_ext *x = ext_of(context_node(jp_self_live()));
    if (x) {
        x->frees++;
        x->free_bytes += size;
    }
    ADD(heap.pub, -(int64_t)size);
}

JP_EXPORT JP_NOINSTR void HookitAlloc(void *ptr, uint64_t size, void *old_ptr)
{
    (void)old_ptr;              /* realloc's old block came as a HookitFree before */
    struct mthread *m = mthread();
    if (JP_UNLIKELY(!m)) {
        alloc_no_thread((uintptr_t)ptr, size);
        return;
    }
    arena_ref node = context_node(jp_self_live());
    uint64_t replaced = block_insert((uintptr_t)ptr, size, node,
                                     __atomic_load_n(&heap.block_epoch, __ATOMIC_RELAXED));
    struct node_ext *x = context_ext(m, node);
    if (x) {
        x->allocs++;
        x->alloc_bytes += size;
    }
    m->c.allocs++;
    m->c.alloc_bytes += size;
    int64_t delta = m->live_delta += (int64_t)(size - replaced);
    if (JP_UNLIKELY(delta >= m->batch))
        live_publish(m);
    int64_t live = __atomic_load_n(&heap.pub, __ATOMIC_RELAXED) + m->live_delta - heap.base;
    if (JP_UNLIKELY(live > (int64_t)__atomic_load_n(&heap.peak, __ATOMIC_RELAXED)))
        atomic_max(&heap.peak, (uint64_t)live);
    if (JP_UNLIKELY(live > (int64_t)m->mem_max) || JP_UNLIKELY((++m->nallocs & 31) == 0))
        heap_series(m, live);
}

JP_EXPORT JP_NOINSTR void HookitFree(void *ptr)
{
    struct block b;
    struct mthread *m = mthread();
    int found = block_remove((uintptr_t)ptr, &b) == 0 &&
                b.epoch == __atomic_load_n(&heap.block_epoch, __ATOMIC_RELAXED);
    if (JP_UNLIKELY(!m)) {
        if (found)
            free_no_thread(b.size);
        return;
    }
    if (JP_UNLIKELY(!found)) {
        m->c.untracked_frees++;
        return;
    }
    struct node_ext *x = context_ext(m, context_node(jp_self_live()));
    if (x) {
        x->frees++;
        x->free_bytes += b.size;
    }
    m->c.frees++;
    m->c.free_bytes += b.size;
    int64_t delta = m->live_delta -= (int64_t)b.size;
    if (JP_UNLIKELY(delta <= -m->batch))
        live_publish(m);
}

/* ---- plugin entry points ------------------------------------------------------------------ */
JP_NOINSTR uint32_t jp_metrics_start(const struct hookit_host *h)
{
    host = h;
    if (h->size < sizeof *h || !h->io_now)
        return 0;               /* an older libhookit without the wrappers */
    start_tick = h->io_now();
    start_coarse = coarse_ns();
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
    if (mopt.alloc) {
        blocks_init();
        if (!end_key_made)
            end_key_made = pthread_key_create(&end_key, mthread_ended) == 0;
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
    case HOOKIT_EV_ALLOC:          /* a libhookit that does not call HookitAlloc */
        if (ev->mem)
            HookitAlloc(ev->mem->ptr, ev->mem->size, ev->mem->old_ptr);
        break;
    case HOOKIT_EV_FREE:
        if (ev->mem)
            HookitFree(ev->mem->ptr);
        break;
    default:
        break;
    }
}

/* The child's profile holds what the child did: counters restart (live
 * blocks stay: the child owns a copy of the heap).  Only this thread
 * survives the fork: every other thread's batch is folded in here. */
JP_NOINSTR void jp_metrics_fork_child(void)
{
    if (!host || host->size < sizeof *host || !host->io_now)
        return;
    start_tick = host->io_now();
    start_coarse = coarse_ns();
    if (files)
        for (uint32_t id = 0; id <= max_file; id++) {
            files[id].lock = 0;
            files[id].used = 0;
        }
    if (series)
        memset(series, 0, (size_t)(last_interval + 1) * sizeof *series);
    max_file = last_interval = 0;
    int64_t live = live_now();
    for (struct mthread *m = mthread_list; m; m = m->next) {
        struct mthread *next = m->next;
        int64_t batch = m->batch;
        memset(m, 0, sizeof *m);
        m->next = next;
        m->epoch = series_epoch;
        m->batch = batch;
    }
    heap.pub = live + heap.base;
    heap.peak = live > 0 ? (uint64_t)live : 0;
    for (int i = 0; i < STRIPES; i++)
        stripes[i].lock = 0;
}

/* ---- reset and zerobase (`hookit ctl`, control.c) -------------------------------------- */
JP_NOINSTR static int zero_ext(void *ctx, arena_ref ref, const struct arena_node *node)
{
    (void)ctx;
    (void)ref;
    arena_ref e = __atomic_load_n(&node->ext, __ATOMIC_ACQUIRE);
    if (e) {
        uint64_t *v = jp_at(e);
        for (size_t i = 0; i < sizeof(struct node_ext) / sizeof *v; i++)
            __atomic_store_n(&v[i], 0, __ATOMIC_RELAXED);
    }
    return 0;
}

/* Every thread's per-context numbers to zero (zerobase keeps the trees). */
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
    if (!host || !(mopt.io || mopt.alloc) || host->size < sizeof *host || !host->io_now)
        return;
    if (cmd != ARENA_CMD_RESET && cmd != ARENA_CMD_ZEROBASE)
        return;
    int saved = errno;
    /* Per thread: the counts so far become the base. */
    for (struct mthread *m = __atomic_load_n(&mthread_list, __ATOMIC_ACQUIRE); m; m = m->next) {
        const uint64_t *c = (const uint64_t *)&m->c;
        uint64_t *b = (uint64_t *)&m->base;
        for (size_t i = 0; i < sizeof m->c / sizeof *c; i++)
            __atomic_store_n(&b[i], __atomic_load_n(&c[i], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    }
    /* The per-file table and the series start empty.  No lock taken: this
     * may run in an instrumented signal handler that interrupted this very
     * thread inside account_file; a record's next call starts it anew (a
     * call made at the same moment is dropped with the old numbers). */
    for (uint32_t id = 1; files && id <= max_file; id++)
        __atomic_store_n(&files[id].used, 0, __ATOMIC_RELAXED);
    ADD(series_epoch, 1);
    if (mt_self)
        series_catch_up(mt_self, series_epoch);
    for (uint32_t i = 0; series && i <= last_interval; i++) {
        __atomic_store_n(&series[i].bytes_read, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&series[i].bytes_written, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&series[i].live_max, 0, __ATOMIC_RELAXED);
    }
    /* The heap: reset forgets the blocks allocated so far (their frees
     * become untracked, they are no leaks) and counts live bytes from 0;
     * zerobase keeps them (they are still live, and leaks if never freed)
     * and restarts the peak from the live bytes now. */
    if (cmd == ARENA_CMD_RESET) {
        ADD(heap.block_epoch, 1);
        __atomic_store_n(&heap.base, heap.base + live_now(), __ATOMIC_RELAXED);
        __atomic_store_n(&heap.peak, 0, __ATOMIC_RELAXED);
    } else {
        int64_t live = live_now();
        __atomic_store_n(&heap.peak, live > 0 ? (uint64_t)live : 0, __ATOMIC_RELAXED);
    }
    /* zerobase keeps the trees; reset makes new nodes, without numbers, but
     * the old open path's stay in a blocked thread's tree until it applies
     * the reset, and a profile written meanwhile reads them (control.c). */
    zero_contexts();
    errno = saved;
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
    uint32_t epoch = __atomic_load_n(&heap.block_epoch, __ATOMIC_RELAXED);
    for (int i = 0; i < STRIPES; i++) {
        struct stripe *s = &stripes[i];
        hk_spin_lock(&s->lock);
        for (size_t k = 0; s->tab && k <= s->mask; k++) {
            if (!s->tab[k].ptr || s->tab[k].epoch != epoch)
                continue;       /* free, or from before a reset */
            if (!s->tab[k].node) {
                leaked_unattributed += s->tab[k].size;
                continue;
            }
            struct leak *l = leak_slot(s->tab[k].node);
            l->node = s->tab[k].node;
            l->count++;
            l->bytes += s->tab[k].size;
        }
        hk_spin_unlock(&s->lock);
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
        hk_spin_lock(&f->lock);
        rows[k].id = id;
        rows[k].path = f->path ? f->path : "";
        rows[k].s = f->s;
        hk_spin_unlock(&f->lock);
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

/* Every thread's counters added up, less their base (reset, zerobase);
 * pending interval bytes flushed: the other threads have ended or are not
 * in the middle of an update that matters for a snapshot. */
JP_NOINSTR static struct mcounts sum_threads(void)
{
    struct mcounts sum = { 0 };
    uint64_t *out = (uint64_t *)&sum;
    for (struct mthread *m = __atomic_load_n(&mthread_list, __ATOMIC_ACQUIRE); m; m = m->next) {
        io_interval_flush(m);
        const uint64_t *c = (const uint64_t *)&m->c, *b = (const uint64_t *)&m->base;
        for (size_t i = 0; i < sizeof sum / sizeof *out; i++) {
            uint64_t v = __atomic_load_n(&c[i], __ATOMIC_RELAXED);
            uint64_t base = __atomic_load_n(&b[i], __ATOMIC_RELAXED);
            out[i] += v > base ? v - base : 0;
        }
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
    struct mcounts sum = sum_threads();
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
        int64_t live = live_now();
        uint64_t peak = __atomic_load_n(&heap.peak, __ATOMIC_RELAXED);
        rc |= set_u64(p, "alloc_peak_bytes", live > 0 && (uint64_t)live > peak ? (uint64_t)live : peak);
        rc |= set_u64(p, "alloc_live_bytes", live > 0 ? (uint64_t)live : 0);
        rc |= set_u64(p, "leak_count", leak_count);
        rc |= set_u64(p, "leak_bytes", leak_bytes + leaked_unattributed);
        rc |= set_u64(p, "leak_bytes_no_context", leaked_unattributed);
        rc |= set_series(p, 1);
        free(leaks);
        leaks = NULL;
    }
    return rc ? -1 : 0;
}
