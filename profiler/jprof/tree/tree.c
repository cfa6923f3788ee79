/* The hot path: function entry and exit.
 *
 * Entry finds (or creates) the child of the current node for fn and pushes
 * a frame; exit pops it and adds the elapsed ticks to the node.  No locks,
 * no allocation, no libc call but the clock; state reached through
 * initial-exec TLS.  Two copies are compiled, one per clock, so the clock is
 * a direct inline read rather than an indirect call.
 *
 * The tree is exact when entries and exits pair, which they do in every
 * build: GCC and Clang instrument inlined copies too (recursion GCC
 * inlines into itself included), each with an exit.  What does not pair is
 * reported, not guessed (docs/exactness.md):
 *  - longjmp, a C++ catch after clang-built frames (no exit hook on unwind)
 *    and swapcontext come from libhookit's interposers as flow events
 *    (flow.c);
 *  - a signal handler that runs instrumented code while this thread is
 *    inside the profiler sees the busy flag: its events are dropped and
 *    counted, never allowed to corrupt the tree.
 * What nothing reported has two fallbacks:
 *  - an entry whose frame lies above the top frame's on the same stack
 *    proves the top frame gone (a callee's frame is always below its
 *    caller's; an inlined callee's is its host's, equal, never above);
 *  - an exit that does not match the top frame closes frames down to the
 *    matching one, or is counted as unmatched and ignored.
 *
 * A frame's position (arena_frame.sp) is the instrumented function's stack
 * pointer at its hook call: the hooks reach us by a tail jump from
 * libhookit, so that is our own canonical frame address.  No search of the
 * caller's frame is needed. */
#include "profiler/jprof/jprof.h"
#include "profiler/jprof/live/attend.h"
#include "profiler/jprof/metrics/metrics.h"
#include "skip.h"
#include "tree.h"

#include <string.h>
#include <time.h>

#define barrier() __asm__ volatile("" ::: "memory")

/* A node's function, which a dlclose in another thread may rename (to a
 * synthetic key, stored atomically): read as one load. */
JP_NOINSTR static inline uint64_t fn_of(const struct arena_node *n)
{
    return __atomic_load_n(&n->fn, __ATOMIC_RELAXED);
}

JP_NOINSTR static inline void close_top(struct jp_thread *t, uint64_t now)
{
    struct arena_thread *rec = t->rec;
    uint32_t depth = rec->depth;
    struct arena_frame *f = &t->stack[depth];
    rec->depth = depth - 1;
    t->cur = f[-1].node;
    barrier();                  /* see leave() */
    jp_node(f->node)->incl += now - f->t0;
}

/* A frame's canonical frame address (its caller's stack pointer before the
 * call): the slot just above the return address the compiler passed as
 * the call site, searched for upwards from the function's stack pointer
 * at its hook.  Unlike that stack pointer, which moves with pushes and
 * alignment inside a function (GCC -O3 enters an inlined callee with a
 * higher one than its host's), the CFA is one per machine frame: a
 * callee's is below its caller's, inlined copies share their host's.
 * Searched only on the rare paths that need it; lim bounds the search to
 * the stack.  Not found (a frame over 1 KiB, a stack written over): the
 * stack pointer plus one stands in. */
#define CFA_SEARCH_SLOTS 128
/* The search reads instrumented functions' frames on purpose, which
 * AddressSanitizer (make check's sanitizer variant) would take for an
 * overflow of ours. */
#define JP_READS_PROGRAM_FRAMES __attribute__((no_sanitize_address))

JP_NOINSTR JP_READS_PROGRAM_FRAMES static uintptr_t frame_cfa(uintptr_t sp, uintptr_t site, uintptr_t lim)
{
    const uintptr_t *w = (const uintptr_t *)sp;
    for (int i = 0; site && i < CFA_SEARCH_SLOTS && (uintptr_t)&w[i + 1] <= lim; i++)
        if (w[i] == site)
            return (uintptr_t)&w[i + 1];
    return sp + 1;
}

/* The fallback for what no flow event reported (see the file comment):
 * frames above the floor whose CFA is below the new entry's on the same
 * stack are gone.  A frame on another stack than the current one is kept
 * while we run on that other stack (a handler on sigaltstack), dropped once
 * we are back on ours. */
JP_NOINSTR __attribute__((noinline)) static void cut_back(struct jp_thread *t, uintptr_t sp, uintptr_t site,
                                                           uint64_t now)
{
    int here = jp_on_stack(t, sp);
    uintptr_t cfa = 0;
    arena_ref outermost = 0;
    uint64_t closed = 0;
    while (jp_depth(t) > t->floor) {
        const struct arena_frame *f = &t->stack[jp_depth(t)];
        int there = jp_on_stack(t, f->sp);
        int gone;
        if (here != there) {
            gone = here && !there;
        } else if (f->sp >= sp) {
            gone = 0;
        } else if (!here) {
            gone = 1;           /* another stack whose bounds we do not know: as before */
        } else {
            if (!cfa)
                cfa = frame_cfa(sp, site, t->stack_hi);
            gone = frame_cfa(f->sp, f->site, t->stack_hi) < cfa;
        }
        if (!gone)
            break;
        int expected = jp_exit_patched(fn_of(jp_node(f->node)));
        if (!expected)
            outermost = f->node;
        close_top(t, now);
        if (!expected) {
            t->rec->unmatched++; /* its exit never came: the tree was repaired (exit_unmatched) */
            closed++;
        }
    }
    if (closed)
        jp_tree_unmatched(outermost, closed);
}

/* A parent with many children (an interpreter's dispatch loop calling
 * hundreds of functions) gets a hash index of them, so finding a child does
 * not scan a long sibling list.  The index is the writer's alone: arena
 * slots holding log2(capacity), then an open table of child references;
 * it doubles at half full (the old table is left behind in the arena).
 * Readers follow the sibling links as always. */
#define INDEX_FROM_CHILDREN 8
#define INDEX_FIRST_BITS 6

JP_NOINSTR static inline uint32_t index_slot(uint64_t fn, unsigned bits)
{
    return (uint32_t)((fn * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

JP_NOINSTR static arena_ref *index_table(const struct arena_node *p, unsigned *bits)
{
    arena_ref *block = jp_at(p->child_index);
    *bits = block[0];
    return block + 1;
}

JP_NOINSTR static void index_put(arena_ref *table, unsigned bits, uint64_t fn, arena_ref child)
{
    uint32_t mask = (1u << bits) - 1, i = index_slot(fn, bits);
    while (table[i])
        i = (i + 1) & mask;
    table[i] = child;
}

/* (Re)build parent's index with room for twice its children. */
JP_NOINSTR static void index_build(struct arena_node *p, uint32_t children)
{
    unsigned bits = INDEX_FIRST_BITS;
    while ((1u << bits) < 2 * (children + 1))
        bits++;
    uint64_t bytes = (((uint64_t)1 << bits) + 1) * sizeof(arena_ref);
    arena_ref ref = jp_arena_alloc((uint32_t)((bytes + ARENA_SLOT - 1) / ARENA_SLOT));
    if (!ref)
        return;
    arena_ref *block = jp_at(ref);
    memset(block, 0, bytes);
    block[0] = bits;
    for (arena_ref c = p->first_child; c; c = jp_node(c)->next_sibling)
        index_put(block + 1, bits, fn_of(jp_node(c)), c);
    p->child_index = ref;
}

JP_NOINSTR static arena_ref index_find(const struct arena_node *p, uint64_t fn)
{
    unsigned bits;
    arena_ref *table = index_table(p, &bits);
    uint32_t mask = (1u << bits) - 1;
    for (uint32_t i = index_slot(fn, bits); table[i]; i = (i + 1) & mask)
        if (fn_of(jp_node(table[i])) == fn)
            return table[i];
    return 0;
}

/* The child of parent for fn when it is not the last one found: the one
 * after it (calls in a loop body come in order), the index or a scan, else
 * a new node. */
JP_NOINSTR __attribute__((noinline)) static arena_ref find_child(struct jp_thread *t, arena_ref parent_ref,
                                                                 uint64_t fn)
{
    struct arena_node *parent = jp_node(parent_ref);
    arena_ref last = parent->last_child;
    arena_ref c = last ? jp_node(last)->next_sibling : 0;
    if (c && fn_of(jp_node(c)) == fn)
        goto found;
    uint32_t children = 0;
    if (parent->child_index) {
        c = index_find(parent, fn);
    } else {
        for (c = parent->first_child; c && fn_of(jp_node(c)) != fn; c = jp_node(c)->next_sibling)
            children++;
        if (!c && children >= INDEX_FROM_CHILDREN)
            index_build(parent, children);
    }
    if (!c) {
        if (!(c = jp_node_new(t, parent_ref, fn)))
            return 0;
        if (parent->child_index) {
            unsigned bits;
            arena_ref *table = index_table(parent, &bits);
            uint32_t used = 0;
            for (arena_ref k = parent->first_child; k && used < (1u << bits); k = jp_node(k)->next_sibling)
                used++;
            if (2 * used > (1u << bits))
                index_build(parent, used);
            else
                index_put(table, bits, fn, c);
        }
    }
found:
    parent->last_child = c;
    return c;
}

JP_NOINSTR void jp_close_top(struct jp_thread *t, uint64_t now)
{
    const struct arena_frame *f = &t->stack[jp_depth(t)];
    if (hk_pad_doubt_closes(&t->pad_doubt, jp_depth(t), f->t0, f->sp))
        jp_undecided_pad_at(f->node);
    close_top(t, now);
}

JP_NOINSTR uintptr_t jp_frame_cfa(const struct jp_thread *t, const struct arena_frame *f)
{
    return frame_cfa(f->sp, f->site, t->stack_hi);
}

JP_NOINSTR int jp_open_context(struct jp_thread *t, uint64_t fn, uintptr_t sp, uint64_t now)
{
    uint32_t depth = jp_depth(t);
    arena_ref c = find_child(t, t->stack[depth].node, fn);
    if (!c || (depth + 1 >= t->capacity && jp_grow_stack(t) != 0))
        return -1;
    t->stack[depth + 1] = (struct arena_frame){ .t0 = now, .sp = sp, .node = c };
    t->cur = c;
    barrier();
    t->rec->depth = depth + 1;
    return 0;
}

/* Which clock an entry or exit reads: each mode gets its own copy of the
 * code, with the clock read inline. */
enum { CLOCK_TSC, CLOCK_MONO, CLOCK_NONE };

JP_NOINSTR static inline uint64_t read_clock(int clock)
{
    return clock == CLOCK_TSC ? hk_counter() : clock == CLOCK_MONO ? hk_mono_ns() : 0;
}

/* The start of every entry and exit: the thread made busy (a signal
 * handler's hooks are then dropped and counted, and live readers retry),
 * then the clock read.  0 when the event is to be ignored; */
JP_NOINSTR __attribute__((always_inline)) static inline int hook_begin(struct jp_thread *t, struct arena_thread *rec,
                                                                     int clock, uint64_t *now)
{
    uint32_t old = jp_busy_take(rec);
    if (JP_UNLIKELY(old & 1)) {
        jp_busy_refused(t, rec, old);
        return 0;
    }
    /* A signal handler that ran between our reading jp_self and taking
     * busy may have ended this thread (the lifecycle's shoot-down at exit):
     * then t is no longer ours to touch.  Its record got seq moved on by
     * two while it ended; we leave it even. */
    if (JP_UNLIKELY(jp_self != t)) {
        jp_busy_done(rec);
        return 0;
    }
    *now = read_clock(clock);
    return 1;
}

/* The end: the open depth published, busy and the seqlock closed. */
JP_NOINSTR __attribute__((always_inline)) static inline void hook_end(struct arena_thread *rec, uint32_t depth)
{
    rec->depth = depth;
    jp_busy_done(rec);
}

/* The return address of the hook call that brought an entry (the hooks
 * reach us by a tail jump: it sits below the frame address sp). */
JP_NOINSTR JP_READS_PROGRAM_FRAMES static uintptr_t hook_return(uintptr_t sp)
{
    return *(const uintptr_t *)(sp - sizeof(uintptr_t));
}

/* Whether an entry of context c is skipped for throttling (skip.h): at a
 * checkpoint of its count, throttled now or before.  The entry's hook call
 * is patched out then when it can be. */
JP_NOINSTR static int entry_throttled(uint64_t fn, arena_ref c, uintptr_t sp)
{
    if (!c || ((jp_node(c)->calls + 1) & jp_throttle_mask) != 0 || !jp_throttle_check(c))
        return 0;
    jp_patch_entry(hook_return(sp), fn);
    return 1;
}

/* An entry the fast path does not take: one that closes abandoned frames,
 * a child not found as the parent's last one, a full shadow stack, a
 * throttling checkpoint, a depth at maxdepth= (skip.h: such entries and
 * those of excluded functions push no frame).  Busy is held; everything
 * else is read again from t.  A synthetic frame (see enter) never closes
 * others. */
JP_NOINSTR __attribute__((noinline)) static void enter_slow(struct jp_thread *t, uint64_t fn, uintptr_t site,
                                                            uintptr_t sp, uint64_t now, int synthetic)
{
    struct arena_thread *rec = t->rec;
    if (jp_pending(rec))
        jp_pending_apply(t); /* a reset or zerobase given while the thread was away */
    if (!synthetic && t->stack[rec->depth].sp < sp) {
        t->over = t->exit_floor = 0; /* a jump left frames past maxdepth too */
        cut_back(t, sp, site, now);
    }
    uint32_t depth = rec->depth;
    if (jp_opt.maxdepth && depth >= jp_opt.maxdepth) {
        t->over++; /* its exit is the next one out (exit_unmatched) */
        t->exit_floor = depth;
        hook_end(rec, depth);
        return;
    }
    arena_ref cur = t->stack[depth].node;
    uint32_t slot = jp_edge_slot(cur, fn);
    arena_ref c = t->edges[slot];
    if (jp_skipping && !synthetic && jp_fn_excluded(t, fn)) {
        jp_patch_entry(hook_return(sp), 0);
        hook_end(rec, depth);
        return;
    }
    if (fn_of(jp_node(c)) != fn || jp_node(c)->parent != cur)
        t->edges[slot] = c = find_child(t, cur, fn);
    if (jp_skipping && !synthetic && entry_throttled(fn, c, sp)) {
        hook_end(rec, depth);
        return;
    }
    if (c && (depth + 1 < t->capacity || jp_grow_stack(t) == 0)) {
        jp_node(c)->calls++;
        /* An inlined copy has its host's call site (issue 29's view as
         * compiled); seen here on a context's first call, off the fast path. */
        if (!synthetic && site && site == t->stack[depth].site)
            jp_node(c)->reserved |= ARENA_NODE_INLINED;
        t->stack[++depth] = (struct arena_frame){ .t0 = now, .sp = sp, .site = site, .node = c };
        t->cur = c;
    } else {
        rec->dropped++;
    }
    hook_end(rec, depth);
}

/* A frame that is not machine code (a Java method, see
 * jp_enter_synthetic) has no stack position of its own: it takes the top
 * of the thread's stack, so the fallback never takes it for abandoned and
 * never cuts it for a native entry. */
JP_NOINSTR static inline uintptr_t synthetic_sp(const struct jp_thread *t)
{
    return t->stack_hi ? t->stack_hi - 1 : UINTPTR_MAX;
}

/* This thread's first event: attach it, then enter as usual. */
JP_NOINSTR __attribute__((noinline)) static void enter_first(int clock, void *fn, void *site, uintptr_t sp,
                                                             int synthetic)
{
    struct jp_thread *t = jp_thread_attach();
    uint64_t now;
    if (!t || !hook_begin(t, t->rec, clock, &now))
        return;
    enter_slow(t, (uint64_t)fn, (uintptr_t)site, synthetic ? synthetic_sp(t) : sp, now, synthetic);
}

/* Entry.  Untimed entries (CLOCK_NONE, the sampling mode) only count;
 * samples charge the current node.  The clock is read inside the busy
 * section: a signal handler that runs instrumented code just before it then
 * lies wholly before this frame's start, never inside it as well as beside
 * it.  Every way off the fast path is a tail call, so the fast path saves no
 * registers; it is written with locals throughout (every store to the
 * arena could alias the thread state for the compiler). */
JP_NOINSTR __attribute__((always_inline)) static inline void enter(int clock, void *fn, void *site,
                                                                  int synthetic)
{
    uintptr_t sp = (uintptr_t)__builtin_dwarf_cfa();
    struct jp_thread *t = jp_self;
    if (JP_UNLIKELY((uintptr_t)t <= (uintptr_t)JP_SENTINEL)) {
        if (!t)
            enter_first(clock, fn, site, sp, synthetic);
        else if (t == JP_FORKING)
            jp_fork_window_hook();
        return;
    }
    struct arena_thread *rec = t->rec;
    uint64_t now;
    if (!hook_begin(t, rec, clock, &now))
        return;
    if (synthetic)
        sp = synthetic_sp(t);
    uint32_t depth = rec->depth;
    struct arena_frame *top = &t->stack[depth];
    char *base = jp_arena_base;     /* not kept in t: the load would wait for t's */
    arena_ref cur = t->cur;
    /* The edge table's hint, taken when its node is cur's child for fn.
     * Reference 0 needs no test: slot 0 starts with ARENA_MAGIC, which is
     * no function's address. */
    arena_ref c = t->edges[jp_edge_slot(cur, (uint64_t)fn)];
    struct arena_node *n = (struct arena_node *)(base + (size_t)c * ARENA_SLOT);
    if (JP_UNLIKELY(top->sp < sp) || JP_UNLIKELY(fn_of(n) != (uint64_t)fn) || JP_UNLIKELY(n->parent != cur)
        || JP_UNLIKELY(depth >= t->fast_depth) || JP_UNLIKELY(jp_pending(rec))
        || JP_UNLIKELY(((n->calls + 1) & jp_throttle_mask) == 0)) {
        enter_slow(t, (uint64_t)fn, (uintptr_t)site, sp, now, synthetic);
        return;
    }
    n->calls++;
    if (clock != CLOCK_NONE)
        top[1].t0 = now; /* sampled frames have no start time (readers use samples) */
    top[1].sp = sp;
    top[1].site = (uintptr_t)site;
    top[1].node = c;
    t->cur = c;
    barrier();                  /* the frame is complete before it counts */
    hook_end(rec, depth + 1);
}

/* Exit that does not match the top frame: close down to the matching frame
 * if there is one, else count it.  Either way an exit did not pair: this
 * one matched no open frame, or the frames above its own never saw theirs
 * (control flow nobody reported, such as a Clang catch inside inlined
 * code).  Each counts as an unmatched exit, so a tree that may be wrong
 * says so (hookit report's "not exact" line) instead of looking exact.
 * Not so the exits of entries that pushed no frame (past maxdepth=, or
 * skipped: skip.h), nor frames closed because their function's exit call
 * was patched out: those exits are expected not to come. */
JP_NOINSTR __attribute__((noinline)) static void exit_unmatched(struct jp_thread *t, uint64_t fn,
                                                                uint64_t now, uintptr_t cfa)
{
    struct arena_thread *rec = t->rec;
    uint32_t d = rec->depth;
    int skipped = 0; /* an exit with no frame of its own: nothing to do */
    if (t->over) {   /* a frame past maxdepth= (enter_slow) */
        if (!--t->over)
            t->exit_floor = 0;
        skipped = 1;
    } else if (jp_skipping) {
        skipped = jp_skipped_exit(t, fn, cfa ? hook_return(cfa) : 0);
    }
    while (!skipped && d > 0 && fn_of(jp_node(t->stack[d].node)) != fn)
        d--;
    if (skipped) {
    } else if (d == 0) {
        rec->unmatched++;
        jp_tree_unmatched(t->stack[rec->depth].node, 1);
    } else {
        /* Frames of patched-out functions lose their exits: expected. */
        uint32_t lost = 0;
        arena_ref outermost = 0;
        for (uint32_t k = d + 1; k <= rec->depth; k++) {
            if (jp_exit_patched(fn_of(jp_node(t->stack[k].node))))
                continue;
            if (!lost++)
                outermost = t->stack[k].node;
        }
        rec->unmatched += lost;
        if (lost)
            jp_tree_unmatched(outermost, lost);
        while (rec->depth >= d)
            close_top(t, now);
    }
    jp_busy_done(rec);          /* close_top kept rec->depth */
    if (rec->request)
        jp_attend(t);
}

/* The exit of the sampling mode, busy held: with no time to add, the
 * shadow stack is not read at all.  The top frame's node is t->cur, and
 * the node of the frame below is its parent: every frame is pushed as a
 * child of the one below it (enter, enter_slow, jp_open_context, the
 * reset's and the fork child's re-made paths all go through the child of
 * the top), and a node's parent never changes.  One dependent load fewer
 * than the frame's node (rec->depth, then the frame, then the node), and
 * no line of the shadow stack to fetch. */
JP_NOINSTR __attribute__((always_inline)) static inline void
leave_untimed(struct jp_thread *t, struct arena_thread *rec, uint32_t depth, void *fn, uintptr_t cfa)
{
    struct arena_node *n = jp_node(t->cur);
    if (JP_UNLIKELY(depth <= t->exit_floor || fn_of(n) != (uint64_t)fn)) {
        exit_unmatched(t, (uint64_t)fn, 0, cfa);
        return;
    }
    rec->depth = depth - 1;
    t->cur = n->parent;
    barrier();
    jp_busy_done(rec); /* requests: leave checks them first (leave_requested) */
}

/* Exit with a request waiting (one load at the exit's start serves both
 * needs): a reset or zerobase given while the thread was away (blocked,
 * say) is applied first, as of its moment, so this exit's frame counts
 * its time from then; the others are attended to after the exit, as
 * always (jp_attend reads the word again).  A request made while this
 * exit runs waits for the next one. */
JP_NOINSTR __attribute__((noinline)) static void leave_requested(struct jp_thread *t, uint64_t fn,
                                                                 uint64_t now, int timed, uintptr_t cfa)
{
    struct arena_thread *rec = t->rec;
    if (jp_pending(rec))
        jp_pending_apply(t);
    uint32_t depth = rec->depth;
    struct arena_frame *f = &t->stack[depth];
    if (depth <= t->exit_floor || fn_of(jp_node(f->node)) != fn) {
        exit_unmatched(t, fn, now, cfa);
        return;
    }
    rec->depth = depth - 1;
    t->cur = f[-1].node;
    barrier();
    if (timed)
        jp_node(f->node)->incl += now - f->t0;
    jp_busy_done(rec);
    if (rec->request)
        jp_attend(t);
}

/* The frame address (the slow paths find the hook call's return address
 * below it), 0 for a synthetic frame's exit (nothing to patch). */
JP_NOINSTR __attribute__((always_inline)) static inline void leave(int clock, void *fn, int synthetic)
{
    uintptr_t sp = (uintptr_t)__builtin_dwarf_cfa();
#define EXIT_RETURN (synthetic ? 0 : sp) /* read on the slow paths only */
    struct jp_thread *t = jp_self;
    if (JP_UNLIKELY((uintptr_t)t <= (uintptr_t)JP_SENTINEL)) {
        if (t == JP_FORKING)
            jp_fork_window_hook();
        return;
    }
    struct arena_thread *rec = t->rec;
    uint64_t now;
    if (!hook_begin(t, rec, clock, &now))
        return;
    if (JP_UNLIKELY(rec->request)) {
        leave_requested(t, (uint64_t)fn, now, clock != CLOCK_NONE, EXIT_RETURN);
        return;
    }
    uint32_t depth = rec->depth;
    if (clock == CLOCK_NONE) {
        leave_untimed(t, rec, depth, fn, EXIT_RETURN);
        return;
    }
    struct arena_frame *f = &t->stack[depth];
    struct arena_node *n = jp_node(f->node);
    if (JP_UNLIKELY(depth <= t->exit_floor || fn_of(n) != (uint64_t)fn)) {
        exit_unmatched(t, (uint64_t)fn, now, EXIT_RETURN);
        return;
    }
#undef EXIT_RETURN
    /* Pop first, then add the time: a profile written by a signal handler
     * that interrupted us here (exit() in a handler) sees the frame either
     * open or closed with its time, never both. */
    rec->depth = depth - 1;
    t->cur = f[-1].node;
    barrier();
    if (clock != CLOCK_NONE)
        n->incl += now - f->t0;
    jp_busy_done(rec);
}

/* Each entry point starts a cache line: otherwise where the linker puts
 * them, and so their speed, moves with every change elsewhere in the
 * library. */
#define HOT_ENTRY JP_NOINSTR __attribute__((aligned(64)))
HOT_ENTRY void jp_enter_tsc(void *fn, void *site) { enter(CLOCK_TSC, fn, site, 0); }
HOT_ENTRY void jp_exit_tsc(void *fn, void *site)
{
    (void)site;
    leave(CLOCK_TSC, fn, 0);
}
HOT_ENTRY void jp_enter_mono(void *fn, void *site) { enter(CLOCK_MONO, fn, site, 0); }
HOT_ENTRY void jp_exit_mono(void *fn, void *site)
{
    (void)site;
    leave(CLOCK_MONO, fn, 0);
}
HOT_ENTRY void jp_enter_counted(void *fn, void *site) { enter(CLOCK_NONE, fn, site, 0); }
HOT_ENTRY void jp_exit_counted(void *fn, void *site)
{
    (void)site;
    leave(CLOCK_NONE, fn, 0);
}

JP_NOINSTR static int clock_in_use(void)
{
    return jp_opt.sample ? CLOCK_NONE : jp_clock_is_tsc() ? CLOCK_TSC : CLOCK_MONO;
}

/* Frames that are not machine code (Java methods from the JVMTI agent),
 * keyed by jp_synthetic_key().  A JVMTI callback's stack pointer does not
 * nest with the native frames around it (see enter()).  They end by key,
 * like any exit. */
JP_NOINSTR void jp_enter_synthetic(uint64_t key)
{
    enter(clock_in_use(), (void *)(uintptr_t)key, NULL, 1);
}

JP_NOINSTR void jp_exit_synthetic(uint64_t key)
{
    leave(clock_in_use(), (void *)(uintptr_t)key, 1);
}
