/*
 * tree_floor: compiler hooks that keep a bare calling-context tree, exact
 * call counts per context and nothing else: the floor under hookit's
 * `timer=sample`, as bench/clock_floor.c is the floor under its default
 * mode.
 *
 * make bench preloads this into the no-op build for the row "tree floor".
 * It does what any exact per-context counter must do on every call, in
 * the cheapest way we know, and leaves out everything else hookit does:
 * no signal safety (a handler's hooks would corrupt the tree), no live
 * readers, no frame stack for longjmp and exceptions (an exit that does
 * not match is repaired by popping), no time, no profile (a line of
 * counts on stderr at exit, with TREE_FLOOR_REPORT=1).
 *
 * The entry: hash (current node, function) into a per-thread direct-mapped
 * cache of 4,096 node pointers, as hookit's edge table does; a hit is
 * checked (the node's function and parent) and counted.  A miss goes to
 * a complete open-addressed map of the thread's nodes, which makes the
 * node when it is new.  The exit pops to the parent.
 *
 * Built with any of these, it adds one of hookit's duties, done the
 * cheapest way, to tell what each costs (the bench's table "floors"):
 *
 *   FLOOR_FRAMES  the frame stack exactness needs: each entry compares its
 *                 stack position with the top frame's (a frame a longjmp or
 *                 an unreported unwind abandoned lies below it) and pushes
 *                 (position, call site, node); each exit pops it
 *   FLOOR_BUSY    the signal-safety word: an xadd makes a per-thread word
 *                 odd for the length of a hook (a signal handler's hooks
 *                 then see it odd and drop out), a store makes it even; and
 *                 the thread state read again after it
 *   FLOOR_SWITCH  the hooks jump to the entry and exit through pointers, as
 *                 libhookit's do to the profiler (the on/off switch and the
 *                 choice of profiler)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NOINSTR __attribute__((no_instrument_function))

struct node {
    void *fn;
    struct node *parent;
    uint64_t calls;
};

#define CACHE_SLOTS 4096
#define CHUNK_NODES (1u << 16)

/* A frame of the stack FLOOR_FRAMES keeps. */
struct frame {
    uintptr_t sp, site;
    struct node *node;
};

#define STACK_FRAMES (1u << 16) /* deeper frames share slots: a floor needs no more */

struct thread_tree {
    struct node *cur;
    uint32_t busy, depth;
    struct node root;
    struct node *cache[CACHE_SLOTS];
    struct node **map; /* every node but the root, by (parent, fn) */
    size_t map_slots, nodes;
    struct node *free_node, *chunk_end;
#ifdef FLOOR_FRAMES
    struct frame stack[STACK_FRAMES];
#endif
};

static __thread struct thread_tree *self __attribute__((tls_model("initial-exec")));

NOINSTR static void *zeroed_pages(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        fputs("tree_floor: out of memory\n", stderr);
        abort();
    }
    return p;
}

NOINSTR static inline unsigned cache_slot(void *fn, struct node *parent)
{
    uint32_t h = (uint32_t)((uintptr_t)fn ^ (uintptr_t)parent << 16 ^ (uintptr_t)parent);
    return (h * 2654435761u) >> 20;
}

NOINSTR static inline size_t map_home(void *fn, struct node *parent, size_t slots)
{
    uint64_t h = ((uintptr_t)fn ^ (uintptr_t)parent * 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
    return (h >> 32) & (slots - 1);
}

NOINSTR static struct node **map_find(struct thread_tree *t, void *fn, struct node *parent)
{
    size_t i = map_home(fn, parent, t->map_slots);
    while (t->map[i] && (t->map[i]->fn != fn || t->map[i]->parent != parent))
        i = (i + 1) & (t->map_slots - 1);
    return &t->map[i];
}

/* Doubles the map when it is half full (probes stay short). */
NOINSTR static void map_grow(struct thread_tree *t)
{
    struct node **old = t->map;
    size_t old_slots = t->map_slots;
    t->map_slots = old_slots ? old_slots * 2 : 1u << 14;
    t->map = zeroed_pages(t->map_slots * sizeof *t->map);
    for (size_t i = 0; i < old_slots; i++)
        if (old[i])
            *map_find(t, old[i]->fn, old[i]->parent) = old[i];
    if (old)
        munmap(old, old_slots * sizeof *old);
}

NOINSTR static struct node *new_node(struct thread_tree *t, void *fn, struct node *parent)
{
    if (t->free_node == t->chunk_end) {
        t->free_node = zeroed_pages(CHUNK_NODES * sizeof(struct node));
        t->chunk_end = t->free_node + CHUNK_NODES;
    }
    struct node *n = t->free_node++;
    n->fn = fn;
    n->parent = parent;
    t->nodes++;
    return n;
}

NOINSTR static struct thread_tree *attach(void)
{
    struct thread_tree *t = zeroed_pages(sizeof *t);
    t->cur = &t->root;
    map_grow(t);
    self = t;
    return t;
}

NOINSTR static inline void busy_done(struct thread_tree *t)
{
#ifdef FLOOR_BUSY
    __atomic_store_n(&t->busy, t->busy + 1, __ATOMIC_RELEASE);
#else
    (void)t;
#endif
}

/* FLOOR_BUSY's word: odd while a hook runs.  One xadd, which a signal
 * cannot split; 0 when the hook interrupted another and must drop out,
 * or when the thread state is no longer ours (the word is then even
 * again, as hookit leaves it). */
NOINSTR static inline int busy_take(struct thread_tree *t)
{
#ifdef FLOOR_BUSY
    uint32_t old = 1;
    __asm__ volatile("xaddl %0, %1" : "+r"(old), "+m"(t->busy) : : "memory");
    if (__builtin_expect(old & 1, 0)) {
        t->busy = old;
        return 0;
    }
    if (__builtin_expect(self != t, 0)) {
        busy_done(t);
        return 0;
    }
    return 1;
#else
    (void)t;
    return 1;
#endif
}

/* FLOOR_FRAMES: is the top frame abandoned (the new frame's stack
 * position above it)?  Then the entry takes the slow path, which a
 * longjmp-free program never needs. */
NOINSTR static inline int frame_abandoned(const struct thread_tree *t, uintptr_t sp)
{
#ifdef FLOOR_FRAMES
    return t->stack[t->depth % STACK_FRAMES].sp < sp && t->depth;
#else
    (void)t;
    (void)sp;
    return 0;
#endif
}

NOINSTR static inline void frame_push(struct thread_tree *t, uintptr_t sp, void *site, struct node *n)
{
#ifdef FLOOR_FRAMES
    uint32_t depth = t->depth + 1;
    t->stack[depth % STACK_FRAMES] = (struct frame){ .sp = sp, .site = (uintptr_t)site, .node = n };
    t->depth = depth;
#else
    (void)t;
    (void)sp;
    (void)site;
    (void)n;
#endif
}

NOINSTR static inline void frame_pop(struct thread_tree *t)
{
#ifdef FLOOR_FRAMES
    t->depth--;
#else
    (void)t;
#endif
}

/* FLOOR_FRAMES, on the slow path: the frames a longjmp abandoned (stack
 * positions below the entry's) are closed first. */
NOINSTR static void frames_cut_back(struct thread_tree *t, uintptr_t sp)
{
#ifdef FLOOR_FRAMES
    while (t->depth && t->stack[t->depth % STACK_FRAMES].sp < sp) {
        t->cur = t->cur->parent;
        t->depth--;
    }
#else
    (void)t;
    (void)sp;
#endif
}

NOINSTR __attribute__((noinline)) static void enter_missed(struct thread_tree *t, void *fn, void *site,
                                                           uintptr_t sp, unsigned slot)
{
    frames_cut_back(t, sp);
    slot = cache_slot(fn, t->cur);
    if (2 * (t->nodes + 1) > t->map_slots)
        map_grow(t);
    struct node **at = map_find(t, fn, t->cur);
    if (!*at)
        *at = new_node(t, fn, t->cur);
    t->cache[slot] = *at;
    (*at)->calls++;
    t->cur = *at;
    frame_push(t, sp, site, *at);
    busy_done(t);
}

/* The entry and exit, under these names when FLOOR_SWITCH puts the
 * compiler's hooks in front of them. */
#ifdef FLOOR_SWITCH
#define FLOOR_ENTER floor_enter
#define FLOOR_EXIT floor_exit
#else
#define FLOOR_ENTER __cyg_profile_func_enter
#define FLOOR_EXIT __cyg_profile_func_exit
#endif

NOINSTR void FLOOR_ENTER(void *fn, void *site)
{
    uintptr_t sp = (uintptr_t)__builtin_dwarf_cfa();
    struct thread_tree *t = self;
    if (__builtin_expect(!t, 0))
        t = attach();
    if (!busy_take(t))
        return;
    struct node *cur = t->cur;
    unsigned slot = cache_slot(fn, cur);
    struct node *n = t->cache[slot];
    if (__builtin_expect(n && n->fn == fn && n->parent == cur && !frame_abandoned(t, sp), 1)) {
        n->calls++;
        t->cur = n;
        frame_push(t, sp, site, n);
        busy_done(t);
        return;
    }
    enter_missed(t, fn, site, sp, slot);
}

/* An exit that does not match (after a longjmp) pops to the frame it is
 * the exit of, or ignores it when no frame is. */
NOINSTR __attribute__((noinline)) static void exit_unmatched(struct thread_tree *t, void *fn)
{
    struct node *n = t->cur;
    uint32_t popped = 1;
    while (n != &t->root && n->fn != fn) {
        n = n->parent;
        popped++;
    }
    if (n != &t->root) {
        t->cur = n->parent;
        while (popped--)
            frame_pop(t);
    }
    busy_done(t);
}

NOINSTR void FLOOR_EXIT(void *fn, void *site)
{
    (void)site;
    struct thread_tree *t = self;
    if (__builtin_expect(!t, 0) || !busy_take(t))
        return;
    struct node *cur = t->cur;
    if (__builtin_expect(cur->fn != fn, 0)) {
        exit_unmatched(t, fn);
        return;
    }
    t->cur = cur->parent;
    frame_pop(t);
    busy_done(t);
}

#ifdef FLOOR_SWITCH
/* Read on every call, as libhookit reads its switch (volatile: the
 * compiler may not fold the jump). */
static void (*volatile floor_entry)(void *, void *) = floor_enter;
static void (*volatile floor_exit_entry)(void *, void *) = floor_exit;

NOINSTR void __cyg_profile_func_enter(void *fn, void *site)
{
    floor_entry(fn, site);
}
NOINSTR void __cyg_profile_func_exit(void *fn, void *site)
{
    floor_exit_entry(fn, site);
}
#endif

/* The main thread's tree: how many contexts and calls it counted. */
NOINSTR __attribute__((destructor)) static void report(void)
{
    struct thread_tree *t = self;
    const char *want = getenv("TREE_FLOOR_REPORT");
    if (!t || !want || strcmp(want, "1") != 0)
        return;
    uint64_t calls = 0;
    for (size_t i = 0; i < t->map_slots; i++)
        if (t->map[i])
            calls += t->map[i]->calls;
    fprintf(stderr, "tree floor: %zu contexts, %llu calls\n", t->nodes, (unsigned long long)calls);
}
