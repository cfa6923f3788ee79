/* See profile/u64map.h. */
#include "profile/u64map.h"

#include <stdlib.h>
#include <string.h>

size_t u64map_slot(const struct u64map *m, uint64_t key)
{
    size_t j = u64map_home(m, key);
    while (m->keys[j] && m->keys[j] != key)
        j = u64map_next(m, j);
    return j;
}

int u64map_room(struct u64map *m)
{
    if (m->keys && (m->used + 1) * 2 <= m->mask + 1)
        return 0;
    size_t cap = m->keys ? (m->mask + 1) * 2 : 1024;
    struct u64map bigger = { calloc(cap, sizeof(uint64_t)), malloc(cap * sizeof(uint32_t)),
                             cap - 1, m->used };
    if (!bigger.keys || !bigger.vals) {
        free(bigger.keys);
        free(bigger.vals);
        return -1;
    }
    for (size_t i = 0; m->keys && i <= m->mask; i++)
        if (m->keys[i]) {
            size_t j = u64map_slot(&bigger, m->keys[i]);
            bigger.keys[j] = m->keys[i];
            bigger.vals[j] = m->vals[i];
        }
    free(m->keys);
    free(m->vals);
    *m = bigger;
    return 0;
}

void u64map_free(struct u64map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}
