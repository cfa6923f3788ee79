/* What the hooks skip, per function and per context (skip.h,
 * docs/filters.md).
 *
 * Per function: a table of what is known of each function seen on the
 * slow path, open addressing on its address, entries written under a lock
 * and read without one (the address is stored last, with release).
 * Decided once: the filters look at a function's names on its first entry
 * and the table answers after.
 *
 * Per context (throttling): a node whose count reaches a multiple of
 * 2^k (the option throttle_calls, rounded up) is looked at.  The clock is
 * read and kept in the node's extension block; at the next checkpoint, if
 * those 2^k calls came in less than 2^k times throttle_ns, each took that
 * long at most on average (one thread's calls of one context follow each
 * other), and the context is throttled: from then on its entries are
 * skipped and its count stays where it was, with a flag saying so.  Its
 * hook calls are patched out where they can be (patch.c); that stops the
 * function's hooks in every context that reaches those call sites, so
 * every node of a patched function is marked as possibly incomplete. */
#include "skip.h"
#include "profiler/jprof/metrics/metrics.h"
#include "profile/procinfo.h"
#include "profile/profile.h"
#include "tree.h"

#include <stdlib.h>
#include <string.h>

int jp_skipping;
uint64_t jp_throttle_mask = UINT64_MAX;
static uint64_t window_ticks; /* 2^k calls in less than this: throttled */

#define FN_BITS 16
struct fn_slot {
    uint64_t fn;
    uint32_t state;
    uint32_t exits_skipped; /* skipped exits seen: its exit calls are patched every EXIT_RETRY */
};
static struct fn_slot *fns; /* 1 << FN_BITS, mapped at start when skipping */
static int fns_lock;
static uint32_t fns_used;

JP_NOINSTR static uint32_t fn_hash(uint64_t fn)
{
    return (uint32_t)((fn * 0x9e3779b97f4a7c15ull) >> (64 - FN_BITS));
}

JP_NOINSTR static struct fn_slot *fn_find(uint64_t fn)
{
    uint32_t mask = (1u << FN_BITS) - 1;
    for (uint32_t i = fn_hash(fn), n = 0; n <= mask; i = (i + 1) & mask, n++) {
        uint64_t k = __atomic_load_n(&fns[i].fn, __ATOMIC_ACQUIRE);
        if (k == fn)
            return &fns[i];
        if (!k)
            return NULL;
    }
    return NULL;
}

JP_NOINSTR uint32_t jp_fn_state(uint64_t fn)
{
    const struct fn_slot *s = fns ? fn_find(fn) : NULL;
    return s ? __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) : 0;
}

/* Under fns_lock: fn's slot, made if need be; NULL when the table is full
 * (three quarters: then nothing new is remembered, and the filters are
 * asked again on each entry of a function not in it). */
JP_NOINSTR static struct fn_slot *fn_slot_locked(uint64_t fn)
{
    struct fn_slot *s = fn_find(fn);
    if (s || 4 * (fns_used + 1) > 3u << FN_BITS)
        return s;
    uint32_t mask = (1u << FN_BITS) - 1, i = fn_hash(fn);
    while (fns[i].fn)
        i = (i + 1) & mask;
    fns_used++;
    fns[i].state = 0;
    __atomic_store_n(&fns[i].fn, fn, __ATOMIC_RELEASE);
    return &fns[i];
}

JP_NOINSTR int jp_fn_mark(uint64_t fn, uint32_t state)
{
    if (!fns)
        return 0;
    hk_spin_lock(&fns_lock);
    struct fn_slot *s = fn_slot_locked(fn);
    if (s)
        __atomic_or_fetch(&s->state, state, __ATOMIC_RELEASE);
    hk_spin_unlock(&fns_lock);
    return s != NULL;
}

/* A library was unloaded: what was known of the functions in [lo, hi) is
 * forgotten, so that another library mapped there later is decided anew. */
JP_NOINSTR void jp_skip_forget(uintptr_t lo, uintptr_t hi)
{
    if (!fns)
        return;
    hk_spin_lock(&fns_lock);
    for (uint32_t i = 0; i < 1u << FN_BITS; i++)
        if (fns[i].fn >= lo && fns[i].fn < hi)
            __atomic_store_n(&fns[i].state, 0, __ATOMIC_RELEASE);
    hk_spin_unlock(&fns_lock);
    jp_filter_forget();
}

/* In a fork child, whose only thread may not be one that held a lock. */
JP_NOINSTR void jp_skip_fork_child(void)
{
    fns_lock = 0;
    jp_patch_fork_child();
    jp_filter_fork_child();
}

/* A function's first entry asks the filters, with the thread quiet: the
 * look-up reads symbols through libc, whose calls of the program's own
 * functions (its malloc) are ours, not the program's.  Two threads may ask
 * at once for one function: both get the same answer. */
JP_NOINSTR int jp_fn_excluded(struct jp_thread *t, uint64_t fn)
{
    if (!jp_filter_active())
        return 0;
    uint32_t state = jp_fn_state(fn);
    if (state & JP_FN_DECIDED)
        return (state & JP_FN_EXCLUDED) != 0;
    int quiet = t->quiet;
    t->quiet = 1;
    int out = jp_filter_excludes(fn);
    t->quiet = quiet;
    /* Not remembered (a full table): not skipped either, or its exits
     * would not be known for a skipped function's. */
    return jp_fn_mark(fn, JP_FN_DECIDED | (out ? JP_FN_EXCLUDED : 0)) && out;
}

JP_NOINSTR int jp_exit_patched(uint64_t fn)
{
    return jp_skipping && (jp_fn_state(fn) & (JP_FN_PATCHED | JP_FN_EXCLUDED));
}

/* ---- throttling ----------------------------------------------------------
 * The node's extension block keeps the flag and the clock at the last
 * checkpoint (struct node_ext's throttled and throttle_t0). */
JP_NOINSTR int jp_throttled(arena_ref node)
{
    arena_ref e = jp_node(node)->ext;
    return e && ((const struct node_ext *)jp_at(e))->throttled;
}

JP_NOINSTR int jp_throttle_check(arena_ref node)
{
    struct node_ext *x = jp_node_ext(node);
    if (!x)
        return 0;
    if (x->throttled)
        return 1;
    uint64_t now = jp_now();
    if (x->throttle_t0 && now - x->throttle_t0 < window_ticks) {
        x->throttled = 1;
        return 1;
    }
    x->throttle_t0 = now;
    return 0;
}

JP_NOINSTR arena_ref jp_child_of(struct jp_thread *t, arena_ref parent, uint64_t fn)
{
    arena_ref c = t->edges[jp_edge_slot(parent, fn)];
    if (c && jp_node(c)->fn == fn && jp_node(c)->parent == parent)
        return c;
    for (c = jp_node(parent)->first_child; c; c = jp_node(c)->next_sibling)
        if (jp_node(c)->fn == fn)
            return c;
    return 0;
}

/* A frame of fn is open in some thread (this one included): entered
 * before its entry call was patched out, it still waits for its exit.
 * Read without the threads' busy: a frame pushed or popped meanwhile may
 * be missed, which only means an exit lost (jp_exit_patched excuses it). */
JP_NOINSTR static int frames_open(uint64_t fn)
{
    for (struct jp_thread *t = jp_thread_all(); t; t = t->all_next) {
        const struct arena_thread *rec = t->rec;
        if (!rec || rec->state != ARENA_THREAD_RUNNING || !t->stack)
            continue;
        uint32_t depth = __atomic_load_n(&rec->depth, __ATOMIC_ACQUIRE);
        for (uint32_t k = 1; k <= depth && k < t->capacity; k++)
            if (jp_node(t->stack[k].node)->fn == fn)
                return 1;
    }
    return 0;
}

/* The exit of a function whose entry pushed no frame: excluded, entered
 * through a patched call, or in a throttled context under the top frame.
 * Its own exit call is patched out then, lazily, and only while no frame
 * of the function is open anywhere: such a frame would miss its exit, and
 * the function's next sibling would be taken for its callee (they share
 * their caller's stack position, so the frame cannot be seen to be gone).
 * Until then the exit is tried again every EXIT_RETRY skipped exits. */
#define EXIT_RETRY 256
JP_NOINSTR int jp_skipped_exit(struct jp_thread *t, uint64_t fn, uintptr_t ret)
{
    struct fn_slot *s = fns ? fn_find(fn) : NULL;
    uint32_t state = s ? __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) : 0;
    int gone = (state & (JP_FN_EXCLUDED | JP_FN_PATCHED)) != 0; /* from every context */
    int skipped = gone;
    if (!skipped && jp_throttle_mask != UINT64_MAX) {
        arena_ref c = jp_child_of(t, t->cur, fn);
        skipped = c && jp_throttled(c);
    }
    if (gone && ret && __atomic_fetch_add(&s->exits_skipped, 1, __ATOMIC_RELAXED) % EXIT_RETRY == 0
        && !frames_open(fn))
        jp_patch_exit(ret, fn);
    return skipped;
}

JP_NOINSTR void jp_skip_start(void (*log)(const char *, ...))
{
    int filters = jp_filter_parse(jp_opt.exclude, jp_opt.include, log) > 0;
    int throttle = jp_opt.throttle_calls != 0;
    if (!filters && !throttle)
        return;
    fns = jp_map_pages(sizeof(struct fn_slot) << FN_BITS);
    if (!fns) {
        log("jprof: cannot map memory for filters and throttling; every function recorded");
        return;
    }
    jp_skipping = 1;
    if (throttle) {
        uint64_t calls = 1;
        while (calls < jp_opt.throttle_calls)
            calls <<= 1;
        window_ticks = (uint64_t)((double)calls * jp_opt.throttle_ns * jp_ticks_per_ns());
        jp_throttle_mask = calls - 1;
    }
    if (jp_opt.patch)
        jp_patch_start();
}

/* ---- in the profile ----------------------------------------------------------
 * build.c: the per-node column "count_incomplete" (only when some node has
 * one): 1 where the count stopped short, a throttled context or a node of
 * a function whose entry call was patched out (its calls through that call
 * no longer counted, in every context). */
/* Whether node i's count may be incomplete: its context throttled, its
 * function patched, or either of those above it (the calls beneath a
 * skipped frame fold into its caller, so the contexts below a throttled
 * one stop counting too).  state[]: 0 unknown, 1 complete, 2 incomplete.
 * Each step decides the undecided node nearest the root on i's path, so
 * no recursion (trees are deep); a copy lists parents before their
 * children, so that is one step for each node in turn. */
JP_NOINSTR static int incomplete(const struct arena_copy_node *nodes, uint8_t *state, uint32_t i)
{
    while (!state[i]) {
        uint32_t k = i;
        while (nodes[k].parent != UINT32_MAX && !state[nodes[k].parent])
            k = nodes[k].parent;
        int own = jp_throttled(nodes[k].ref) || (jp_fn_state(nodes[k].fn) & JP_FN_PATCHED);
        int above = nodes[k].parent != UINT32_MAX && state[nodes[k].parent] == 2;
        state[k] = own || above ? 2 : 1;
    }
    return state[i] == 2;
}

JP_NOINSTR int jp_skip_thread(struct profile *p, struct prof_thread *th, const struct arena_copy_node *nodes,
                              uint32_t n)
{
    if (!jp_skipping)
        return 0;
    uint8_t *state = calloc(n ? n : 1, 1);
    if (!state)
        return -1;
    uint64_t *col = NULL;
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        if (!incomplete(nodes, state, i))
            continue;
        if (!col && !(col = jp_new_column(p, th, "count_incomplete", n)))
            rc = -1;
        else
            col[i] = 1;
    }
    free(state);
    return rc;
}

/* process.c: what was skipped, so that reports can say what is not shown. */
JP_NOINSTR int jp_skip_meta(struct profile *p)
{
    char filters[1024];
    int rc = 0;
    if (jp_filter_describe(filters, sizeof filters))
        rc |= profile_set_meta(p, "filters", filters);
    if (jp_opt.maxdepth)
        rc |= procinfo_set_meta_u64(p, "maxdepth", jp_opt.maxdepth);
    if (jp_throttle_mask != UINT64_MAX) {
        rc |= procinfo_set_meta_u64(p, "throttle_calls", jp_throttle_mask + 1);
        rc |= procinfo_set_meta_u64(p, "throttle_ns", jp_opt.throttle_ns);
    }
    if (jp_skipping) {
        struct jp_patch_counts c;
        jp_patch_counts(&c);
        rc |= profile_set_meta(p, "patching",
                               !jp_opt.patch    ? "off"
                                   : c.possible ? "on"
                                                : "not here (x86-64 only)");
        rc |= procinfo_set_meta_u64(p, "patched_entry_calls", c.enter_sites);
        rc |= procinfo_set_meta_u64(p, "patched_exit_calls", c.exit_sites);
        rc |= procinfo_set_meta_u64(p, "unpatchable_calls", c.refused);
    }
    return rc ? -1 : 0;
}
