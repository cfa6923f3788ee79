/* An open-addressing map from non-zero 64-bit keys to 32-bit values: the
 * one table behind the tools' and readers' lookups (functions by address,
 * nodes by (parent, function), callgrind edges).  Linear probing, grown to
 * keep it at most half full.  A zeroed struct is an empty map. */
#ifndef HOOKIT_U64MAP_H
#define HOOKIT_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map {
    uint64_t *keys;             /* 0 = empty slot */
    uint32_t *vals;
    size_t mask, used;
};

/* Room for one more key (allocates or doubles the table).  0 or -1. */
int u64map_room(struct u64map *m);
/* Where a probe for key starts; step with u64map_next. */
static inline size_t u64map_home(const struct u64map *m, uint64_t key)
{
    uint64_t x = key * 0x9e3779b97f4a7c15ull;
    return (size_t)(x ^ (x >> 29)) & m->mask;
}
static inline size_t u64map_next(const struct u64map *m, size_t slot)
{
    return (slot + 1) & m->mask;
}
/* The slot holding key, or the empty slot where it would go.  The map must
 * have a table (u64map_room). */
size_t u64map_slot(const struct u64map *m, uint64_t key);
/* Fill an empty slot found by u64map_slot. */
static inline void u64map_put(struct u64map *m, size_t slot, uint64_t key, uint32_t val)
{
    m->keys[slot] = key;
    m->vals[slot] = val;
    m->used++;
}
void u64map_free(struct u64map *m);

/* A key for a (name, module) pair of strings (FNV-1a over both, a 0xff
 * byte between them). */
static inline uint64_t u64map_hash_pair(const char *name, const char *module)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *s = name; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (const char *s = module; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

#endif
