/* Control flow the hooks do not show, as libhookit's interposers report it
 * (include/hookit/profiler.h, struct hookit_flow; docs/exactness.md).
 *
 * Marks and jumps.  A mark is the running context's number and the depth
 * of its open frames above the context's floor; a jump closes every frame
 * opened since (their time counted up to now, their calls already were).
 *
 * Catches and unwinding.  A C++ landing pad (a cleanup or a catch clause)
 * about to run, and a C++ catch: frames deeper than its frame on the same
 * stack are gone.  GCC runs the exit hooks of the frames it unwinds, so
 * there is nothing left to close; clang does not, and this closes them
 * before the landing pad's destructors run: the frames below the landing
 * pad's frame, and the functions inlined into it that were entered inside
 * the landing pad's try (common/inlined_pad.h).
 *
 * Contexts (swapcontext).  The thread's own context keeps its frames at the
 * bottom of the shadow stack.  A coroutine runs on top of whoever resumed
 * it, above a floor that no fallback, catch or jump goes below: its first
 * run opens its function under the resumer's path (main > foo > coro); when
 * it is switched away its open frames are closed (time up to now) and kept,
 * by function, in a record under the ucontext it was saved in; when it is
 * resumed they are opened again as context frames (no call counted) under
 * the new resumer's path.  So a coroutine's time is charged to whoever
 * resumed it, every call is counted once, and nothing of another stack is
 * ever taken for abandoned.
 *
 * The records are shared by the process's threads (a coroutine may be
 * resumed by another thread), in private pages of our own: no malloc,
 * which may be the program's own instrumented one. */
#include "common/inlined_pad.h"
#include "common/unwind.h"
#include "profiler/jprof/jprof.h"
#include "profiler/jprof/live/attend.h"
#include "profiler/jprof/metrics/wait.h"
#include "tree.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

struct saved_frame {
    uint64_t fn;
    uintptr_t sp;
};

enum { CTX_FRESH = 1, CTX_SAVED };

struct context {
    const void *key;            /* the ucontext_t it was made or saved in */
    struct context *next;       /* hash chain, or the free list */
    uint32_t serial;            /* its number, in marks */
    uint32_t state;             /* CTX_* */
    uint32_t nframes, cap;
    struct saved_frame *frames; /* CTX_SAVED: its open frames, outermost first */
};

#define BUCKETS 1024u
#define RECORDS_PER_PAGE (4096 / sizeof(struct context))

static struct context *buckets[BUCKETS];
static struct context *free_records;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_serial = 1;    /* 0: a thread's own context */

JP_NOINSTR static uint32_t bucket_of(const void *key)
{
    return (uint32_t)(((uintptr_t)key * 0x9e3779b97f4a7c15ull) >> 54) & (BUCKETS - 1);
}

/* Called with lock held. */
JP_NOINSTR static struct context *new_record(void)
{
    if (!free_records) {
        struct context *page = jp_map_pages(4096);
        if (!page)
            return NULL;
        for (size_t i = 0; i < RECORDS_PER_PAGE; i++) {
            page[i].next = free_records;
            free_records = &page[i];
        }
    }
    struct context *c = free_records;
    free_records = c->next;
    struct saved_frame *frames = c->frames;
    uint32_t cap = c->cap;
    memset(c, 0, sizeof *c);
    c->frames = frames;         /* a freed record keeps its frame pages */
    c->cap = cap;
    return c;
}

/* The record saved under key, unlinked; NULL if none.  Called with lock held. */
JP_NOINSTR static struct context *take_record(const void *key)
{
    for (struct context **p = &buckets[bucket_of(key)]; *p; p = &(*p)->next)
        if ((*p)->key == key) {
            struct context *c = *p;
            *p = c->next;
            return c;
        }
    return NULL;
}

/* Link c under key, replacing whatever was saved there (a ucontext_t
 * reused for another coroutine).  Called with lock held. */
JP_NOINSTR static void put_record(struct context *c, const void *key)
{
    struct context *old = take_record(key);
    if (old) {
        old->next = free_records;
        free_records = old;
    }
    c->key = key;
    uint32_t b = bucket_of(key);
    c->next = buckets[b];
    buckets[b] = c;
}

JP_NOINSTR static void free_record(struct context *c)
{
    pthread_mutex_lock(&lock);
    c->next = free_records;
    free_records = c;
    pthread_mutex_unlock(&lock);
}

JP_NOINSTR static int reserve_frames(struct context *c, uint32_t n)
{
    if (n <= c->cap)
        return 0;
    size_t bytes = ((n * sizeof *c->frames) + 4095) & ~(size_t)4095;
    struct saved_frame *f = jp_map_pages(bytes);
    if (!f)
        return -1;
    if (c->frames)
        munmap(c->frames, c->cap * sizeof *c->frames);
    c->frames = f;
    c->cap = (uint32_t)(bytes / sizeof *f);
    return 0;
}

JP_NOINSTR static uint64_t flow_now(void)
{
    return jp_opt.sample ? 0 : jp_now();
}

JP_NOINSTR static void close_to(struct jp_thread *t, uint32_t depth, uint64_t now)
{
    while (jp_depth(t) > depth)
        jp_close_top(t, now);
}

/* ---- marks, jumps, catches ---------------------------------------------------- */

#define NO_MARK UINT64_MAX

JP_NOINSTR static uint64_t mark(const struct jp_thread *t)
{
    uint32_t depth = jp_depth(t);
    uint32_t above = depth > t->floor ? depth - t->floor : 0;
    return (uint64_t)t->ctx_serial << 32 | above;
}

/* Back to the thread's own context, the running coroutine's frames
 * abandoned (a longjmp out of a coroutine into its resumer). */
JP_NOINSTR static void leave_coroutine(struct jp_thread *t, uint64_t now)
{
    close_to(t, t->floor, now);
    t->floor = 0;
    t->ctx_serial = 0;
}

JP_NOINSTR static void jump(struct jp_thread *t, uint64_t m, uint64_t now)
{
    if (m == NO_MARK)
        return;
    uint32_t serial = (uint32_t)(m >> 32), above = (uint32_t)m;
    if (serial != t->ctx_serial) {
        if (serial != 0)
            return;             /* into another coroutine: not ours to know */
        leave_coroutine(t, now);
    }
    jp_wait_jump(t, t->floor + above, now);
    close_to(t, t->floor + above, now);
}

/* Frames deeper than the catching frame, whose stack pointer is sp, are
 * gone.  The test is on each frame's CFA: all of a frame that was unwound
 * lies below the catcher's stack pointer, while the catcher's own frames
 * (its inlined callees included) and its callers have theirs above it, even
 * when their stack pointer at the hook was lower (pushes, alignment). */
JP_NOINSTR static void catch_at(struct jp_thread *t, uintptr_t sp, uint64_t now)
{
    int here = jp_on_stack(t, sp);
    while (jp_depth(t) > t->floor) {
        const struct arena_frame *f = &t->stack[jp_depth(t)];
        if (jp_on_stack(t, f->sp) != here || f->sp >= sp || (here && jp_frame_cfa(t, f) > sp))
            break;
        jp_close_top(t, now);
    }
}

JP_NOINSTR static void open_frame(const void *ctx, unsigned i, uint64_t *fn, uintptr_t *site)
{
    const struct jp_thread *t = ctx;
    const struct arena_frame *f = &t->stack[jp_depth(t) - i];
    *fn = jp_node(f->node)->fn;
    *site = f->site;
}

/* A landing pad is about to run in the frame whose stack pointer, at the
 * call the exception came out of, is flow->sp: the open frames it unwound are
 * closed (common/unwind.h).  Functions inlined into that frame share its
 * return address: those entered inside the landing pad's try are closed
 * too (common/inlined_pad.h), the others stay open (docs/exactness.md);
 * one kept open though its owning of the landing pad was not decided is
 * doubted until its exit comes (struct hk_pad_doubt, jp_close_top). */
JP_NOINSTR static void unwind_to(struct jp_thread *t, const struct hookit_flow *flow, uint64_t now)
{
    uintptr_t sp = flow->sp;
    int here = jp_on_stack(t, sp);
    while (jp_depth(t) > t->floor) {
        const struct arena_frame *f = &t->stack[jp_depth(t)];
        if (!hk_frame_unwound(f->sp, f->site, jp_on_stack(t, f->sp), sp, here))
            break;
        jp_close_top(t, now);
    }
    int undecided;
    for (unsigned n = hk_inlined_unwound(flow, jp_depth(t) - t->floor, open_frame, t, &undecided); n; n--)
        jp_close_top(t, now);
    if (undecided) {
        const struct arena_frame *f = &t->stack[jp_depth(t)];
        hk_pad_doubt_keep(&t->pad_doubt, jp_depth(t), f->t0, f->sp);
    }
}

/* ---- contexts ---------------------------------------------------------------- */

/* Keep the running coroutine's frames under key and close them. */
JP_NOINSTR static void save_running(struct jp_thread *t, const void *key, uint64_t now)
{
    uint32_t depth = jp_depth(t), n = depth > t->floor ? depth - t->floor : 0;
    if (key) {
        pthread_mutex_lock(&lock);
        struct context *c = new_record();
        if (c && reserve_frames(c, n) == 0) {
            for (uint32_t i = 0; i < n; i++) {
                const struct arena_frame *f = &t->stack[t->floor + 1 + i];
                c->frames[i] = (struct saved_frame){ jp_node(f->node)->fn, f->sp };
            }
            c->nframes = n;
            c->serial = t->ctx_serial;
            c->state = CTX_SAVED;
            put_record(c, key);
        } else if (c) {
            c->next = free_records;
            free_records = c;
        }
        pthread_mutex_unlock(&lock);
    }
    close_to(t, t->floor, now);
}

/* Run the context saved or made in key on top of the current frames. */
JP_NOINSTR static void resume(struct jp_thread *t, const void *key, uint64_t now)
{
    if (key && key == t->native_ctx) {
        t->floor = 0;
        t->ctx_serial = 0;
        return;
    }
    pthread_mutex_lock(&lock);
    struct context *c = key ? take_record(key) : NULL;
    pthread_mutex_unlock(&lock);
    t->floor = jp_depth(t);
    t->ctx_serial = c ? c->serial : __atomic_fetch_add(&next_serial, 1, __ATOMIC_RELAXED);
    if (!c)
        return;                 /* not one we saw made or saved: it starts here */
    if (c->state == CTX_SAVED)
        for (uint32_t i = 0; i < c->nframes; i++)
            if (jp_open_context(t, c->frames[i].fn, c->frames[i].sp, now) != 0)
                break;
    free_record(c);
}

JP_NOINSTR static void switch_context(struct jp_thread *t, const void *from, const void *to, uint64_t now)
{
    if (t->ctx_serial == 0 || (from && from == t->native_ctx)) {
        /* The thread's own context is running (saving into its own slot
         * says so even when a coroutine's end went unreported): its frames
         * stay where they are. */
        t->floor = 0;
        t->ctx_serial = 0;
        if (from)
            t->native_ctx = from;
    } else {
        save_running(t, from, now);
    }
    resume(t, to, now);
}

JP_NOINSTR static void made(const void *key)
{
    pthread_mutex_lock(&lock);
    struct context *c = new_record();
    if (c) {
        c->serial = __atomic_fetch_add(&next_serial, 1, __ATOMIC_RELAXED);
        c->state = CTX_FRESH;
        put_record(c, key);
    }
    pthread_mutex_unlock(&lock);
}

/* ---- the entry point ----------------------------------------------------------- */

/* Busy is taken for the thread's tree.  When it is held already, a signal
 * handler that interrupted one of our hooks is leaving it by a jump (a
 * siglongjmp out of the handler): that hook will never finish, so the jump
 * takes its busy section over and puts the current node back in step with
 * the stack, which is all a hook can leave half done. */
JP_NOINSTR static int take_thread(struct jp_thread *t, int kind)
{
    if (jp_busy_begin(t))
        return 1;
    if (kind != HOOKIT_FLOW_JUMP)
        return 0;
    t->cur = t->stack[jp_depth(t)].node;
    return 1;
}

JP_NOINSTR uint64_t jp_flow(const struct hookit_flow *f)
{
    if (f->kind == HOOKIT_FLOW_MADE) {
        made(f->to);
        return 0;
    }
    struct jp_thread *t = jp_self_live();
    if (!t) {
        /* No frame open in this thread yet: a mark of depth 0.  While the
         * profiler itself works (JP_QUIET, the fork window) nothing can
         * be said: a mark no jump acts on. */
        return f->kind == HOOKIT_FLOW_MARK && jp_self ? NO_MARK : 0;
    }
    if (f->kind == HOOKIT_FLOW_MARK)
        return mark(t);
    if (!take_thread(t, (int)f->kind))
        return 0;
    if (jp_pending(t->rec))
        jp_pending_apply(t); /* given while the thread was away: before the jump */
    uint64_t now = flow_now();
    /* Frames past maxdepth= were left or switched away from, how many is
     * not known: their count starts again (a later exit of one of them is
     * then unmatched, and said so). */
    t->over = t->exit_floor = 0;
    switch (f->kind) {
    case HOOKIT_FLOW_JUMP:
        jump(t, f->mark, now);
        break;
    case HOOKIT_FLOW_CATCH:
        catch_at(t, f->sp, now);
        break;
    case HOOKIT_FLOW_UNWIND:
        unwind_to(t, f, now);
        break;
    case HOOKIT_FLOW_SWITCH:
        switch_context(t, f->from, f->to, now);
        break;
    case HOOKIT_FLOW_ENDED:
        close_to(t, t->floor, now);
        switch_context(t, NULL, f->to, now);
        break;
    default:
        break;
    }
    jp_busy_done(t->rec);
    return 0;
}

JP_NOINSTR void jp_flow_fork_child(void)
{
    pthread_mutex_init(&lock, NULL);    /* another thread may have held it */
}
