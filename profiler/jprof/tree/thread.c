/* Threads: each thread gets, on its first event, a record in the arena
 * (readable from outside), a synthetic root node, its own chunk of node
 * slots, and a private shadow stack that grows without a fixed limit. */
#include "common/foreign.h"
#include "common/unwind.h"
#include "profiler/jprof/jprof.h"
#include "profiler/jprof/metrics/metrics.h"
#include "profiler/jprof/live/attend.h"
#include "profiler/jprof/metrics/sampler.h"
#include "profiler/jprof/metrics/wait.h"
#include "tree.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint32_t next_index = 1;         /* 0 is the main thread */
static pthread_key_t end_key;

#define FIRST_CHUNK 16u                 /* slots; chunks double up to MAX_CHUNK */
#define MAX_CHUNK 1024u
#define FIRST_STACK 1024u               /* frames */

JP_NOINSTR void *jp_map_pages(size_t size)
{
    return hk_pages_map(size, 0);
}

JP_NOINSTR static int refill_chunk(struct jp_thread *t)
{
    arena_ref r = jp_chunk_alloc(t, t->chunk_slots);   /* slot r is the chunk's header */
    if (!r) {
        t->arena_full = 1;
        return -1;
    }
    t->chunk_next = r + 1;
    t->chunk_end = r + t->chunk_slots;
    if (t->chunk_slots < MAX_CHUNK)
        t->chunk_slots *= 2;
    return 0;
}

/* A new node, linked as the last child of parent.  The node is complete
 * before the release store makes it reachable, so a reader in another
 * process never sees a half-made node. */
JP_NOINSTR arena_ref jp_node_new(struct jp_thread *t, arena_ref parent, uint64_t fn)
{
    if (t->chunk_next == t->chunk_end && refill_chunk(t) != 0)
        return 0;
    arena_ref r = t->chunk_next++;
    struct arena_node *n = jp_node(r);
    memset(n, 0, sizeof *n);
    n->fn = fn;
    n->parent = parent;
    if (parent) {
        struct arena_node *p = jp_node(parent);
        arena_ref last = p->first_child;
        if (!last) {
            __atomic_store_n(&p->first_child, r, __ATOMIC_RELEASE);
        } else {
            while (jp_node(last)->next_sibling)
                last = jp_node(last)->next_sibling;
            __atomic_store_n(&jp_node(last)->next_sibling, r, __ATOMIC_RELEASE);
        }
    }
    return r;
}

/* The shadow stack lives in the arena so live readers see open frames.  It
 * doubles when full: a new block, a copy, then the switch under seq. */
JP_NOINSTR static struct arena_frame *new_stack(uint32_t capacity, arena_ref *ref)
{
    uint64_t bytes = (uint64_t)capacity * sizeof(struct arena_frame);
    *ref = jp_arena_alloc((uint32_t)((bytes + ARENA_SLOT - 1) / ARENA_SLOT));
    return *ref ? jp_at(*ref) : NULL;
}

JP_NOINSTR int jp_grow_stack(struct jp_thread *t)
{
    arena_ref ref;
    struct arena_frame *bigger = new_stack(t->capacity * 2, &ref);
    if (!bigger)
        return -1;
    memcpy(bigger, t->stack, (size_t)(jp_depth(t) + 1) * sizeof *bigger);
    t->stack = bigger;
    jp_set_capacity(t, t->capacity * 2);
    t->rec->capacity = t->capacity;
    __atomic_store_n(&t->rec->stack, ref, __ATOMIC_RELEASE);
    return 0;
}

JP_NOINSTR static int is_main_thread(void)
{
    return syscall(SYS_gettid) == getpid();
}

JP_NOINSTR void jp_thread_name(struct arena_thread *rec)
{
    char name[16] = { 0 };
    if (rec->index == 0) {
        strcpy(rec->name, "main");
        return;
    }
    if (prctl(PR_GET_NAME, name) == 0)
        memcpy(rec->name, name, sizeof rec->name);
    rec->name[sizeof rec->name - 1] = 0;
}

JP_NOINSTR void jp_thread_publish(struct jp_thread *t)
{
    struct arena_header *h = jp_arena_header();
    arena_ref head = __atomic_load_n(&h->first_thread, __ATOMIC_RELAXED);
    do
        t->rec->next = head;
    while (!__atomic_compare_exchange_n(&h->first_thread, &head, t->rec_ref, 1,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* Ended threads give their private state and shadow stack back for the
 * next thread to start, so a program that runs through many short-lived
 * threads does not grow by a stack per thread.  Their trees stay. */
static struct jp_thread *free_threads;
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;

JP_NOINSTR static struct jp_thread *reuse_thread(arena_ref *stack_ref)
{
    pthread_mutex_lock(&free_lock);
    struct jp_thread *t = free_threads;
    if (t)
        free_threads = t->next_free;
    pthread_mutex_unlock(&free_lock);
    if (!t)
        return NULL;
    struct arena_frame *stack = t->stack;
    uint32_t capacity = t->capacity;
    *stack_ref = (arena_ref)(((char *)stack - jp_arena_base) / ARENA_SLOT);
    memset(t, 0, JP_THREAD_RECYCLED_BYTES); /* the list link and metrics stay */
    t->stack = stack;
    jp_set_capacity(t, capacity);
    return t;
}

JP_NOINSTR static void recycle_thread(struct jp_thread *t)
{
    pthread_mutex_lock(&free_lock);
    t->next_free = free_threads;
    free_threads = t;
    pthread_mutex_unlock(&free_lock);
}

/* A thread state with its shadow stack, and a record: a retired thread's
 * when reuse_record allows (never for the scratch states, which retire.c
 * itself makes while holding its lock), else a new one.  *stack_ref is the
 * stack's reference.  On failure a new state is unmapped (it was never
 * listed) and a reused one goes back to the free list. */
JP_NOINSTR static struct jp_thread *make_thread(int reuse_record, arena_ref *stack_ref)
{
    struct jp_thread *t = reuse_thread(stack_ref);
    int fresh = t == NULL;
    if (fresh) {
        if (!(t = jp_map_pages(sizeof *t)))
            return NULL;
        jp_set_capacity(t, FIRST_STACK);
        t->stack = new_stack(t->capacity, stack_ref);
    }
    t->chunk_slots = FIRST_CHUNK;
    t->rec_ref = reuse_record ? jp_retired_record() : 0;
    t->rec_reused = t->rec_ref != 0;
    if (!t->rec_ref)
        t->rec_ref = jp_arena_alloc(ARENA_THREAD_SLOTS);
    if (!t->stack || !t->rec_ref) {
        if (fresh)
            munmap(t, sizeof *t);
        else
            recycle_thread(t);
        return NULL;
    }
    if (fresh)
        jp_thread_list(t);
    return t;
}

/* The one constructor of a thread's record and tree, for every way a
 * thread state starts: a new thread, a scratch state, a forked child.
 * t->rec_ref is the record to use (a retired thread's when t->rec_reused,
 * still in the thread list: it changes identity under its seq); the tree
 * starts with a fresh root and an empty shadow stack.  index: 0 for the
 * main thread (or a forked child's only thread), UINT32_MAX for a scratch
 * state that is never published. */
JP_NOINSTR static int thread_begin(struct jp_thread *t, arena_ref stack_ref, uint32_t index)
{
    struct arena_thread *rec = jp_at(t->rec_ref);
    arena_ref next = rec->next;
    uint32_t seq = rec->seq;
    memset(rec, 0, sizeof *rec);
    if (t->rec_reused) {
        rec->next = next;
        __atomic_store_n(&rec->seq, (seq | 1) + 1, __ATOMIC_RELEASE);
    }
    t->rec = rec;
    rec->priv = (uint64_t)(uintptr_t)t;
    rec->stack = stack_ref;
    rec->capacity = t->capacity;
    t->floor = 0;
    t->ctx_serial = 0;
    t->native_ctx = NULL;
    memset(t->edges, 0, sizeof t->edges);
    jp_metrics_thread_begin(t);
    arena_ref root = jp_node_new(t, 0, 0);
    if (!root)
        return -1;
    rec->root = root;
    rec->depth = 0;
    t->cur = root;
    t->stack[0] = (struct arena_frame){ .t0 = 0, .sp = UINTPTR_MAX, .node = root };
    if (index == UINT32_MAX) {
        t->stack_lo = 0;
        t->stack_hi = UINTPTR_MAX;
        return 0;
    }
    rec->tid = (int32_t)syscall(SYS_gettid);
    rec->index = index;
    rec->state = ARENA_THREAD_RUNNING;
    jp_thread_name(rec);
    hk_stack_bounds(&t->stack_lo, &t->stack_hi); /* a longjmp on it, or a handler on an alternate stack */
    if (!t->rec_reused)
        jp_thread_publish(t);
    t->rec_reused = 0;
    return 0;
}

/* A private thread state that is never published: for calibration. */
JP_NOINSTR struct jp_thread *jp_thread_scratch(void)
{
    arena_ref stack_ref;
    struct jp_thread *t = make_thread(0, &stack_ref);
    if (!t)
        return NULL;
    if (thread_begin(t, stack_ref, UINT32_MAX) != 0) {
        recycle_thread(t); /* listed: never unmapped */
        return NULL;
    }
    return t;
}

/* Its tree's few arena slots stay behind, unreachable. */
JP_NOINSTR void jp_thread_scratch_free(struct jp_thread *t)
{
    recycle_thread(t);
}

JP_NOINSTR struct jp_thread *jp_thread_attach(void)
{
    return jp_thread_attach_numbered(-1);
}

/* This thread's number: 0 for the main thread; number, its place in order
 * of creation when the lifecycle layer knows it (it numbers threads in the
 * creating thread); else the order in which threads reach the profiler. */
JP_NOINSTR static uint32_t thread_index(int number)
{
    if (is_main_thread())
        return 0;
    if (number <= 0)
        return __atomic_fetch_add(&next_index, 1, __ATOMIC_RELAXED);
    uint32_t next = __atomic_load_n(&next_index, __ATOMIC_RELAXED);
    while (next <= (uint32_t)number &&
           !__atomic_compare_exchange_n(&next_index, &next, (uint32_t)number + 1, 1,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    return (uint32_t)number;
}

/* Set-up calls libc (pthread_getattr_np, prctl), which may call the
 * program's own instrumented malloc: jp_self is JP_QUIET meanwhile, so
 * those hooks are ignored instead of starting a second set-up. */
JP_NOINSTR struct jp_thread *jp_thread_attach_numbered(int number)
{
    int saved = errno;
    jp_self = JP_QUIET;
    arena_ref stack_ref;
    struct jp_thread *t = make_thread(1, &stack_ref);
    if (!t || thread_begin(t, stack_ref, thread_index(number)) != 0) {
        jp_self = NULL;
        errno = saved;
        return NULL;
    }
    pthread_setspecific(end_key, t);    /* thread end without the lifecycle layer */
    jp_pc_samples_clear(t);             /* a recycled state's table held another tree's nodes */
    jp_self = t;
    jp_sampler_thread_start();
    errno = saved;
    return t;
}

/* Close the thread's open frames now and mark it ended.  Runs inside the
 * ending thread (lifecycle's fini_thread, or the key destructor). */
JP_NOINSTR void jp_thread_end(void)
{
    struct jp_thread *t = jp_self_live();
    if (!t || t->rec->state == ARENA_THREAD_ENDED)
        return;
    /* Called from a signal handler (the lifecycle's shoot-down at exit) that
     * interrupted this thread inside an entry or exit: its tree is mid-update
     * and must not be touched here.  The thread stays "running"; the profile
     * counts its open frames up to the end like any live thread's. */
    if (!jp_busy_begin(t))
        return;
    if (jp_pending(t->rec))
        jp_pending_apply(t); /* a reset or zerobase it had not seen: its tree ends after it */
    jp_sampler_thread_end();
    uint64_t now = jp_now();
    jp_wait_thread_end(t, now);
    struct arena_thread *rec = t->rec;
    for (uint32_t d = rec->depth; d > 0; d--) {
        struct arena_frame *f = &t->stack[d];
        jp_node(f->node)->incl += now - f->t0;
    }
    rec->depth = 0;
    t->cur = rec->root;
    if (!t->named)
        jp_thread_name(rec);
    rec->priv = 0;
    jp_metrics_thread_end(t);
    /* From here on a signal handler's hooks go to the ended state, so the
     * record can stop being busy before it is handed over. */
    jp_self = JP_ENDED;
    jp_busy_done(rec);
    __atomic_store_n(&rec->state, ARENA_THREAD_ENDED, __ATOMIC_RELEASE);
    if (rec->index != 0)
        jp_retire(rec, t->rec_ref);
    recycle_thread(t);
}

JP_NOINSTR static void end_by_key(void *arg)
{
    (void)arg;
    jp_thread_end();
}

/* The forking thread's path, taken before the fork in private memory: the
 * shadow stack is in the shared arena, where the parent goes on after the
 * fork (it may even exit and reuse the pages for its calibration) while
 * the child copies it.  Valid between FORK_PREPARE and FORK_PARENT only,
 * so a child made by a raw fork system call (no PREPARE) is not given an
 * old fork's path. */
struct fork_frame {
    uint64_t fn;
    uintptr_t sp;
};
static struct fork_frame *fork_path;
static size_t fork_path_bytes;
static uint32_t fork_depth;
static int fork_path_taken;
static struct jp_thread *fork_self;     /* the forking thread's state */
static uint64_t fork_window_hooks;      /* hooks while it was JP_FORKING */

JP_NOINSTR void jp_fork_window_hook(void)
{
    fork_window_hooks++;
}

/* The forking thread's own state again, with the hooks that ran meanwhile
 * counted as dropped. */
JP_NOINSTR static struct jp_thread *fork_window_end(void)
{
    struct jp_thread *t = fork_self;
    fork_self = NULL;
    if (t && fork_window_hooks)
        t->rec->dropped += fork_window_hooks;
    fork_window_hooks = 0;
    return t;
}

JP_NOINSTR void jp_thread_fork_prepare(void)
{
    struct jp_thread *t = jp_self_live();
    uint32_t depth = t ? jp_depth(t) : 0;
    size_t need = ((size_t)(depth + 1) * sizeof *fork_path + 4095) & ~(size_t)4095;
    if (need > fork_path_bytes) {
        if (fork_path)
            munmap(fork_path, fork_path_bytes);
        fork_path = jp_map_pages(need);
        fork_path_bytes = fork_path ? need : 0;
    }
    fork_depth = fork_path ? depth : 0;
    for (uint32_t i = 1; i <= fork_depth; i++)
        fork_path[i] = (struct fork_frame){ jp_node(t->stack[i].node)->fn, t->stack[i].sp };
    fork_path_taken = 1;
    fork_self = t;
    fork_window_hooks = 0;
    if (t)
        jp_self = JP_FORKING;
}

JP_NOINSTR void jp_thread_fork_parent(void)
{
    fork_path_taken = 0;
    if (jp_self == JP_FORKING)
        jp_self = fork_window_end();
}

/* The first step in a forked child, before anything calls libc: the
 * forking thread's hooks stay out of the shared tree until the child's own
 * is built (jp_thread_fork_child). */
JP_NOINSTR void jp_thread_fork_child_begin(void)
{
    if (jp_self == JP_FORKING || jp_self_live()) {
        if (!fork_self)
            fork_self = jp_self_live();     /* a fork without PREPARE */
        jp_self = JP_QUIET;
    }
}

/* In a forked child: only this thread exists.  Its tree starts from the
 * path it forked on, as context frames (no calls: the parent counted
 * them, so a merged fork family counts each call once), timed from the
 * fork; the child's profile holds what the child did and nothing the
 * parent did. */
JP_NOINSTR void jp_thread_fork_child(void)
{
    struct jp_thread *t = jp_self == JP_QUIET ? fork_window_end() : NULL;
    pthread_mutex_init(&free_lock, NULL);   /* another thread may have held it */
    free_threads = NULL;                    /* their stacks are the parent's threads' */
    jp_arena_header()->first_thread = 0;
    next_index = 1;
    uint32_t depth = fork_path_taken ? fork_depth : 0;
    fork_path_taken = 0;
    if (!t) {
        jp_self = NULL;
        return;
    }
    uint64_t dropped = t->rec->dropped;
    t->rec_reused = 0;
    t->chunk_next = t->chunk_end = 0;
    t->chunk_slots = FIRST_CHUNK;
    t->rec_ref = jp_arena_alloc(ARENA_THREAD_SLOTS);
    arena_ref stack_ref;
    t->stack = new_stack(t->capacity, &stack_ref);
    if (!t->rec_ref || !t->stack || thread_begin(t, stack_ref, 0) != 0) {
        jp_self = NULL;
        return;
    }
    t->rec->dropped = dropped;  /* the fork window's hooks, in the child too */
    uint64_t now = jp_now();
    for (uint32_t i = 1; i <= depth; i++)
        if (jp_open_context(t, fork_path[i].fn, fork_path[i].sp, now) != 0)
            break;
    jp_self = t;
}

JP_NOINSTR void jp_threads_init(void)
{
    pthread_key_create(&end_key, end_by_key);
}
