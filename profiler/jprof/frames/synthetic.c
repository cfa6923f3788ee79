/* Frames that are not machine code: MPI calls ("MPI:MPI_Allreduce"), Java
 * methods ("J:Main.main"), ...  Each distinct name gets a key that takes a
 * function address's place in the trees; keys have the top bit set, which
 * no user-space code address has, so they never collide with real code.
 *
 * Registration is rare (callers cache their key) and locked; the hot path
 * only ever sees the key.  Each name is also put in the arena (struct
 * arena_frame_name, profile/arena.h), so that a live reader (`hookit
 * snapshot`, `top`, `recover`) names the frames too. */
#include "profiler/jprof/jprof.h"
#include "frames.h"
#include "profile/u64map.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SYNTHETIC_TAG (1ull << 63)

struct synthetic {
    char *name, *module;
};

static struct synthetic *entries;
static uint32_t nentries, capacity;
static uint32_t *index_by_hash; /* open addressing: entry index + 1 */
static uint32_t hash_size;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

JP_NOINSTR static int rehash(uint32_t size)
{
    uint32_t *table = calloc(size, sizeof *table);
    if (!table)
        return -1;
    for (uint32_t i = 0; i < nentries; i++) {
        uint32_t h = (uint32_t)u64map_hash_pair(entries[i].name, entries[i].module) & (size - 1);
        while (table[h])
            h = (h + 1) & (size - 1);
        table[h] = i + 1;
    }
    free(index_by_hash);
    index_by_hash = table;
    hash_size = size;
    return 0;
}

JP_NOINSTR static int64_t lookup_locked(const char *name, const char *module)
{
    if (!hash_size)
        return -1;
    uint32_t h = (uint32_t)u64map_hash_pair(name, module) & (hash_size - 1);
    for (; index_by_hash[h]; h = (h + 1) & (hash_size - 1)) {
        struct synthetic *e = &entries[index_by_hash[h] - 1];
        if (!strcmp(e->name, name) && !strcmp(e->module, module))
            return index_by_hash[h] - 1;
    }
    return -1;
}

JP_NOINSTR static int64_t add_locked(const char *name, const char *module)
{
    if (nentries == capacity) {
        uint32_t cap = capacity ? capacity * 2 : 64;
        struct synthetic *e = realloc(entries, cap * sizeof *e);
        if (!e)
            return -1;
        entries = e;
        capacity = cap;
    }
    if ((nentries + 1) * 2 > hash_size && rehash(hash_size ? hash_size * 2 : 128) != 0)
        return -1;
    char *n = strdup(name), *m = strdup(module);
    if (!n || !m) {
        free(n);
        free(m);
        return -1;
    }
    entries[nentries] = (struct synthetic){ n, m };
    uint32_t h = (uint32_t)u64map_hash_pair(name, module) & (hash_size - 1);
    while (index_by_hash[h])
        h = (h + 1) & (hash_size - 1);
    index_by_hash[h] = ++nentries;
    return nentries - 1;
}

/* Under the lock: the one writer of the list. */
JP_NOINSTR static void publish_locked(uint64_t key, const char *name, const char *module)
{
    size_t nl = strnlen(name, 65535), ml = strnlen(module, 65535);
    uint64_t bytes = sizeof(struct arena_frame_name) + nl + ml + 2;
    if (!jp_arena_base)
        return;
    arena_ref r = jp_arena_alloc((uint32_t)((bytes + ARENA_SLOT - 1) / ARENA_SLOT));
    if (!r)
        return;
    struct arena_more *more = jp_at(ARENA_MORE_REF);
    struct arena_frame_name *f = jp_at(r);
    f->key = key;
    f->next = more->frame_names;
    f->name_len = (uint16_t)nl;
    f->module_len = (uint16_t)ml;
    memcpy(f->text, name, nl);
    f->text[nl] = 0;
    memcpy(f->text + nl + 1, module, ml);
    f->text[nl + 1 + ml] = 0;
    __atomic_store_n(&more->frame_names, r, __ATOMIC_RELEASE);
}

JP_NOINSTR uint64_t jp_synthetic_key(const char *name, const char *module)
{
    if (!module)
        module = "";
    pthread_mutex_lock(&lock);
    int64_t i = lookup_locked(name, module);
    if (i < 0 && (i = add_locked(name, module)) >= 0)
        publish_locked(SYNTHETIC_TAG | (uint64_t)i, name, module);
    pthread_mutex_unlock(&lock);
    return i < 0 ? 0 : SYNTHETIC_TAG | (uint64_t)i;
}

JP_NOINSTR int jp_is_synthetic(uint64_t key)
{
    return (key & SYNTHETIC_TAG) != 0;
}

JP_NOINSTR int jp_synthetic_name(uint64_t key, const char **name, const char **module)
{
    int found = 0;
    pthread_mutex_lock(&lock);
    uint64_t i = key & ~SYNTHETIC_TAG;
    if (jp_is_synthetic(key) && i < nentries) {
        *name = entries[i].name;
        *module = entries[i].module;
        found = 1;
    }
    pthread_mutex_unlock(&lock);
    return found;
}
