/* Threads: each thread gets, on its first event, a record in the arena
 * (readable from outside), a synthetic root node, its own chunk of node
 * slots, and a private shadow stack that grows without a fixed limit. */
#include "jprof.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread struct jp_thread *jp_self __attribute__((tls_model("initial-exec")));

static uint32_t next_index = 1;         /* 0 is the main thread */
static pthread_key_t end_key;
extern void *__libc_stack_end;

#define FIRST_CHUNK 16u                 /* slots; chunks double up to MAX_CHUNK */
#define MAX_CHUNK 1024u
#define FIRST_STACK 1024u               /* frames */

JP_NOINSTR static void *map_pages(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
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
    t->capacity *= 2;
    t->rec->capacity = t->capacity;
    __atomic_store_n(&t->rec->stack, ref, __ATOMIC_RELEASE);
    return 0;
}

JP_NOINSTR static int is_main_thread(void)
{
    return syscall(SYS_gettid) == getpid();
}

/* The bounds of this thread's stack, to tell a longjmp on it from a signal
 * handler running on an alternate stack. */
JP_NOINSTR static void find_stack_bounds(struct jp_thread *t)
{
    if (is_main_thread()) {
        struct rlimit rl;
        uintptr_t top = (uintptr_t)__libc_stack_end + (1u << 20);
        uintptr_t size = 1ull << 30;
        if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < size)
            size = rl.rlim_cur + (1u << 20);
        t->stack_hi = top;
        t->stack_lo = top > size ? top - size : 0;
        return;
    }
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            t->stack_lo = (uintptr_t)addr;
            t->stack_hi = (uintptr_t)addr + size;
        }
        pthread_attr_destroy(&attr);
    }
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
    memset(t, 0, sizeof *t);
    t->stack = stack;
    t->capacity = capacity;
    return t;
}

JP_NOINSTR static void recycle_thread(struct jp_thread *t)
{
    pthread_mutex_lock(&free_lock);
    t->next_free = free_threads;
    free_threads = t;
    pthread_mutex_unlock(&free_lock);
}

/* reuse_record: a new thread may take a retired thread's record (never the
 * scratch states, which retire.c itself makes while holding its lock). */
JP_NOINSTR static struct jp_thread *make_thread(int reuse_record)
{
    arena_ref stack_ref;
    struct jp_thread *t = reuse_thread(&stack_ref);
    if (!t) {
        if (!(t = map_pages(sizeof *t)))
            return NULL;
        t->capacity = FIRST_STACK;
        t->stack = new_stack(t->capacity, &stack_ref);
    }
    t->chunk_slots = FIRST_CHUNK;
    t->rec_ref = reuse_record ? jp_retired_record() : 0;
    t->rec_reused = t->rec_ref != 0;
    if (!t->rec_ref)
        t->rec_ref = jp_arena_alloc(ARENA_THREAD_SLOTS);
    if (!t->stack || !t->rec_ref) {
        munmap(t, sizeof *t);
        return NULL;
    }
    t->rec = jp_at(t->rec_ref);
    if (t->rec_reused) {
        /* A retired thread's record, still in the list: it becomes this
         * thread's, its seq moving on so live readers notice. */
        arena_ref next = t->rec->next;
        uint32_t seq = t->rec->seq;
        memset(t->rec, 0, sizeof *t->rec);
        t->rec->next = next;
        __atomic_store_n(&t->rec->seq, (seq | 1) + 1, __ATOMIC_RELEASE);
    }
    t->rec->priv = (uint64_t)(uintptr_t)t;
    t->rec->stack = stack_ref;
    t->rec->capacity = t->capacity;
    return t;
}

/* Give t a fresh root and an empty shadow stack. */
JP_NOINSTR static int start_tree(struct jp_thread *t)
{
    arena_ref root = jp_node_new(t, 0, 0);
    if (!root)
        return -1;
    t->rec->root = root;
    t->rec->depth = 0;
    t->cur = root;
    t->stack[0] = (struct arena_frame){ .t0 = 0, .sp = UINTPTR_MAX, .node = root };
    return 0;
}

/* A private thread state that is never published: for calibration. */
JP_NOINSTR struct jp_thread *jp_thread_scratch(void)
{
    struct jp_thread *t = make_thread(0);
    if (!t)
        return NULL;
    if (start_tree(t) != 0) {
        munmap(t, sizeof *t);
        return NULL;
    }
    t->stack_lo = 0;
    t->stack_hi = UINTPTR_MAX;
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

/* number: the thread's place in order of creation when the lifecycle layer
 * knows it (it numbers threads in the creating thread), else -1: then the
 * order in which threads first reach the profiler. */
JP_NOINSTR struct jp_thread *jp_thread_attach_numbered(int number)
{
    int saved = errno;
    struct jp_thread *t = make_thread(1);
    if (!t || start_tree(t) != 0) {
        errno = saved;
        return NULL;
    }
    t->rec->tid = (int32_t)syscall(SYS_gettid);
    if (is_main_thread()) {
        t->rec->index = 0;
    } else if (number > 0) {
        t->rec->index = (uint32_t)number;
        uint32_t next = __atomic_load_n(&next_index, __ATOMIC_RELAXED);
        while (next <= (uint32_t)number &&
               !__atomic_compare_exchange_n(&next_index, &next, (uint32_t)number + 1, 1,
                                            __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            ;
    } else {
        t->rec->index = __atomic_fetch_add(&next_index, 1, __ATOMIC_RELAXED);
    }
    t->rec->state = ARENA_THREAD_RUNNING;
    jp_thread_name(t->rec);
    find_stack_bounds(t);
    if (!t->rec_reused)
        jp_thread_publish(t);
    jp_self = t;
    pthread_setspecific(end_key, t);    /* thread end without the lifecycle layer */
    jp_sampler_thread_start();
    errno = saved;
    return t;
}

/* Close the thread's open frames now and mark it ended.  Runs inside the
 * ending thread (lifecycle's fini_thread, or the key destructor). */
JP_NOINSTR void jp_thread_end(void)
{
    struct jp_thread *t = jp_self;
    if (!t || t == JP_ENDED || t->rec->state == ARENA_THREAD_ENDED)
        return;
    /* Called from a signal handler (the lifecycle's shoot-down at exit) that
     * interrupted this thread inside an entry or exit: its tree is mid-update
     * and must not be touched here.  The thread stays "running"; the profile
     * counts its open frames up to the end like any live thread's. */
    if (!jp_busy_begin(t))
        return;
    jp_sampler_thread_end();
    uint64_t now = jp_now();
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

/* The forking thread's depth, in private memory: the child's copy of the
 * shared record may already show the parent's later calls.  Set between
 * FORK_PREPARE and FORK_PARENT only, so a child made by a raw fork system
 * call (no PREPARE) is not given an old fork's depth. */
static uint32_t fork_depth;
static int fork_depth_known;

JP_NOINSTR void jp_thread_fork_prepare(void)
{
    struct jp_thread *t = jp_self_live();
    fork_depth = t ? jp_depth(t) : 0;
    fork_depth_known = 1;
}

JP_NOINSTR void jp_thread_fork_parent(void)
{
    fork_depth_known = 0;
}

/* In a forked child: only this thread exists.  Its tree restarts from the
 * path it is on (each open frame once, timed from the fork), so the child's
 * profile holds what the child did and nothing the parent did. */
JP_NOINSTR void jp_thread_fork_child(void)
{
    struct jp_thread *t = jp_self;
    pthread_mutex_init(&free_lock, NULL);   /* another thread may have held it */
    jp_arena_header()->first_thread = 0;
    next_index = 1;
    if (!t || t == JP_ENDED) {
        jp_self = NULL;
        return;
    }
    uint64_t now = jp_now();
    arena_ref old_rec = t->rec_ref;
    t->rec_ref = jp_arena_alloc(ARENA_THREAD_SLOTS);
    if (!t->rec_ref) {
        jp_self = NULL;
        return;
    }
    arena_ref stack_ref = ((struct arena_thread *)jp_at(old_rec))->stack;
    t->rec = jp_at(t->rec_ref);
    memset(t->rec, 0, sizeof *t->rec);
    t->rec->priv = (uint64_t)(uintptr_t)t;
    t->rec->stack = stack_ref;
    t->rec->capacity = t->capacity;
    t->chunk_next = t->chunk_end = 0;
    t->chunk_slots = FIRST_CHUNK;
    uint32_t depth = fork_depth_known ? fork_depth : ((struct arena_thread *)jp_at(old_rec))->depth;
    fork_depth_known = 0;
    if (start_tree(t) != 0) {
        jp_self = NULL;
        return;
    }
    for (uint32_t i = 1; i <= depth; i++) {
        uint64_t fn = jp_node(t->stack[i].node)->fn;
        arena_ref n = jp_node_new(t, t->stack[i - 1].node, fn);
        if (!n)
            break;
        jp_node(n)->calls = 1;
        t->stack[i].node = n;
        t->stack[i].t0 = now;
        t->cur = n;
        t->rec->depth = i;
    }
    t->rec->tid = (int32_t)syscall(SYS_gettid);
    t->rec->index = 0;
    t->rec->state = ARENA_THREAD_RUNNING;
    jp_thread_name(t->rec);
    find_stack_bounds(t);
    if (!t->rec_reused)
        jp_thread_publish(t);
}

JP_NOINSTR void jp_threads_init(void)
{
    pthread_key_create(&end_key, end_by_key);
}
