/* The node allocator: chunks of arena slots for a thread's nodes, taken
 * from free lists by size class when a merged thread gave some back
 * (retire.c), else from the arena.
 *
 * Node chunks carry a header in their first slot linking a thread's chunks
 * together (arena_thread.chunks), so they can be handed back.  The free
 * lists have a lock of their own: the merged tree grows (jp_node_new, then
 * jp_chunk_alloc) while retire.c holds its lock, and with one lock for
 * both a merge that needed a chunk of a class on a free list waited for
 * itself. */
#include "profiler/jprof/jprof.h"
#include "tree.h"

#include <pthread.h>

#define SIZE_CLASSES 8 /* 16 .. 2048 slots */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static arena_ref free_chunks[SIZE_CLASSES];

JP_NOINSTR static int size_class(uint32_t slots)
{
    int c = 0;
    while ((16u << c) < slots && c < SIZE_CLASSES - 1)
        c++;
    return (16u << c) == slots ? c : -1;
}

/* A chunk of slots for t's nodes (the first slot is the header), linked to
 * t's record so it can be given back when the thread's tree is merged. */
JP_NOINSTR arena_ref jp_chunk_alloc(struct jp_thread *t, uint32_t slots)
{
    int c = size_class(slots);
    arena_ref r = 0;
    if (c >= 0 && __atomic_load_n(&free_chunks[c], __ATOMIC_RELAXED)) {
        pthread_mutex_lock(&lock);
        if ((r = free_chunks[c]) != 0)
            __atomic_store_n(&free_chunks[c], ((struct arena_chunk *)jp_at(r))->next, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&lock);
    }
    if (!r && !(r = jp_arena_alloc(slots)))
        return 0;
    struct arena_chunk *h = jp_at(r);
    h->next = t->rec->chunks;
    h->slots = slots;
    t->rec->chunks = r;
    return r;
}

/* Give every chunk of rec back to the free lists (its tree was merged). */
JP_NOINSTR void jp_chunks_give_back(struct arena_thread *rec)
{
    pthread_mutex_lock(&lock);
    arena_ref r = rec->chunks;
    while (r) {
        struct arena_chunk *h = jp_at(r);
        arena_ref next = h->next;
        int c = size_class(h->slots);
        if (c >= 0) {
            h->next = free_chunks[c];
            __atomic_store_n(&free_chunks[c], r, __ATOMIC_RELAXED); /* read unlocked */
        }
        r = next;
    }
    rec->chunks = 0;
    pthread_mutex_unlock(&lock);
}

JP_NOINSTR void jp_chunk_fork_child(void)
{
    pthread_mutex_init(&lock, NULL);
}
