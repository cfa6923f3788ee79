/* Retiring ended threads, so that a program running through many
 * short-lived threads profiles in bounded memory.
 *
 * An ended thread's tree stays as it is (a thread of its own in the
 * profile) until more than jp_opt.threads_kept threads have ended; then,
 * when the next thread starts, the oldest ended tree is merged, path by
 * path, into one "merged" thread, its node chunks go back to free lists,
 * and its thread record is reused in place for the new thread.  Merging
 * adds calls, times, samples and the extension counters, so every total
 * in the profile stays exact; only which thread did what is lost for the
 * merged ones.  The merged tree's chunks come from the node allocator
 * (chunk.c), which takes its own lock inside this file's. */
#include "profiler/jprof/jprof.h"
#include "profiler/jprof/metrics/metrics.h"
#include "tree.h"
#include "profile/arena_walk.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static arena_ref *ended;        /* ring of ended thread records, oldest first */
static uint32_t ended_cap, ended_head, ended_count;
static struct jp_thread *merged; /* the merged threads' tree and its allocator */

JP_NOINSTR static arena_ref merged_child(arena_ref parent, uint64_t fn)
{
    struct arena_node *p = jp_node(parent);
    arena_ref c = (arena_ref)p->last_child;
    if (!c || jp_node(c)->fn != fn) {
        for (c = p->first_child; c && jp_node(c)->fn != fn; c = jp_node(c)->next_sibling)
            ;
        if (!c && !(c = jp_node_new(merged, parent, fn)))
            return 0;
        p->last_child = c;
    }
    return c;
}

/* Extension blocks are additive counters (struct node_ext, profile/arena.h). */
JP_NOINSTR static void add_ext(struct arena_node *dst, const struct arena_node *src)
{
    if (!src->ext)
        return;
    if (!dst->ext) {
        arena_ref e = jp_arena_alloc(NODE_EXT_SLOTS);
        if (!e)
            return;
        memset(jp_at(e), 0, NODE_EXT_SLOTS * ARENA_SLOT);
        __atomic_store_n(&dst->ext, e, __ATOMIC_RELEASE);
    }
    uint64_t *d = jp_at(dst->ext);
    const uint64_t *s = jp_at(src->ext);
    for (unsigned i = 0; i < NODE_EXT_COUNTERS; i++) /* not wait_since: state */
        d[i] += s[i];
}

/* Add the tree under src_root to the merged tree, path by path.  Preorder
 * by parent links; path[d] is the merged node at depth d. */
JP_NOINSTR static int merge_tree(arena_ref src_root)
{
    uint32_t cap = 64, depth = 0;
    arena_ref *path = malloc(cap * sizeof *path);
    if (!path)
        return -1;
    path[0] = merged->rec->root;
    arena_ref r = jp_node(src_root)->first_child;
    while (r) {
        struct arena_node *s = jp_node(r);
        /* path[0..depth] is always set: depth only grows by one with the
         * store below it, and shrinks back along the same parents. */
        // NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage): see above
        arena_ref d = merged_child(path[depth], s->fn);
        if (!d)
            break;
        struct arena_node *dn = jp_node(d);
        dn->calls += s->calls;
        dn->incl += s->incl;
        dn->samples += s->samples;
        /* MPI frames' bytes, and a machine frame's ARENA_NODE_INLINED */
        dn->reserved = ((dn->reserved + s->reserved) & ~ARENA_NODE_INLINED)
            | ((dn->reserved | s->reserved) & ARENA_NODE_INLINED);
        add_ext(dn, s);
        if (s->first_child) {
            if (++depth == cap) {
                arena_ref *bigger = realloc(path, (cap *= 2) * sizeof *path);
                if (!bigger)
                    break;
                path = bigger;
            }
            path[depth] = d;
            r = s->first_child;
            continue;
        }
        while (r != src_root && !jp_node(r)->next_sibling) {
            r = jp_node(r)->parent;
            depth--;
        }
        r = r != src_root ? jp_node(r)->next_sibling : 0;
    }
    free(path);
    return 0;
}

JP_NOINSTR static int ensure_merged_thread(void)
{
    if (merged)
        return 0;
    merged = jp_thread_scratch();
    if (!merged)
        return -1;
    merged->rec->tid = 0;
    merged->rec->index = UINT32_MAX;
    merged->rec->state = ARENA_THREAD_ENDED;
    strcpy(merged->rec->name, "(merged)");
    jp_thread_publish(merged);
    return 0;
}

/* A thread record to reuse for a new thread, or 0: when more threads have
 * ended than are kept, the oldest one's tree is merged away first. */
JP_NOINSTR arena_ref jp_retired_record(void)
{
    if (__atomic_load_n(&ended_count, __ATOMIC_RELAXED) <= jp_opt.threads_kept)
        return 0;
    pthread_mutex_lock(&lock);
    arena_ref ref = 0;
    if (ended_count > jp_opt.threads_kept && ensure_merged_thread() == 0) {
        ref = ended[ended_head];
        ended_head = (ended_head + 1) % ended_cap;
        __atomic_store_n(&ended_count, ended_count - 1, __ATOMIC_RELAXED);   /* read unlocked */
        struct arena_thread *rec = jp_at(ref);
        struct arena_thread *m = merged->rec;
        m->seq++;
        __atomic_thread_fence(__ATOMIC_RELEASE);
        merge_tree(rec->root);
        m->dropped += rec->dropped;
        m->unmatched += rec->unmatched;
        m->merged_threads++;
        __atomic_store_n(&m->seq, m->seq + 1, __ATOMIC_RELEASE);
        /* The record changes identity under its seq, for live readers. */
        rec->seq++;
        __atomic_thread_fence(__ATOMIC_RELEASE);
        jp_chunks_give_back(rec);
    }
    pthread_mutex_unlock(&lock);
    return ref;
}

/* t's thread has ended: queue its record.  May run in a signal handler
 * (the lifecycle's shoot-down at exit), hence trylock: a record not queued
 * is simply kept as it is. */
JP_NOINSTR void jp_retire(struct arena_thread *rec, arena_ref ref)
{
    (void)rec;
    if (!ended || pthread_mutex_trylock(&lock) != 0)
        return;
    if (ended_count < ended_cap) {
        ended[(ended_head + ended_count) % ended_cap] = ref;
        __atomic_store_n(&ended_count, ended_count + 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&lock);
}

JP_NOINSTR void jp_retire_init(void)
{
    ended_cap = jp_opt.threads_kept + 64;
    ended = calloc(ended_cap, sizeof *ended);
}

static int zero_numbers(void *ctx, arena_ref ref, const struct arena_node *node)
{
    (void)ctx;
    (void)node;
    struct arena_node *n = jp_node(ref);
    n->calls = n->incl = n->samples = n->reserved = 0;
    return 0;
}

/* reset and zerobase (control.c) on the trees of ended threads, the merged
 * one included: their threads are gone, and nothing but this file (under
 * its lock) writes them any more.  zerobase zeroes their numbers; reset
 * gives each an empty tree under a fresh root (nodes are never unlinked
 * while readers may follow them).  Under each record's seq, for readers.
 * trylock: this may run at a hook exit in a signal handler that
 * interrupted this file; the ended trees are then left as they are. */
JP_NOINSTR void jp_retired_control(uint32_t cmd)
{
    if (pthread_mutex_trylock(&lock) != 0)
        return;
    struct arena_view v = { jp_arena_base, jp_arena_header()->used };
    for (arena_ref r = jp_arena_header()->first_thread; r; r = ((struct arena_thread *)jp_at(r))->next) {
        struct arena_thread *rec = jp_at(r);
        if (__atomic_load_n(&rec->state, __ATOMIC_ACQUIRE) != ARENA_THREAD_ENDED || (rec->seq & 1))
            continue;
        arena_ref root = cmd == ARENA_CMD_RESET ? jp_arena_alloc(1) : 0;
        rec->seq++;
        __atomic_thread_fence(__ATOMIC_RELEASE);
        if (root)
            __atomic_store_n(&rec->root, root, __ATOMIC_RELEASE);
        else
            arena_tree_walk(&v, rec->root, zero_numbers, NULL, NULL);
        rec->dropped = rec->unmatched = 0;
        __atomic_store_n(&rec->seq, rec->seq + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
}

/* A forked child keeps none of the parent's threads. */
JP_NOINSTR void jp_retire_fork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    jp_chunk_fork_child();
    ended_head = ended_count = 0;
    merged = NULL;
}
