/*
 * The strings a2n_lookup returns must stay valid until a2n_close, and a
 * profiler may look up the same fallback name many times: so strings are
 * interned (one copy per distinct content) in chunks freed all at once.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2n/a2n_internal.h"

#define CHUNK_SIZE (64 * 1024)

static uint64_t hash_string(const char *s)
{
    uint64_t h = 1469598103934665603ull;       /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static char *arena_copy(struct a2n_strings *s, const char *str, size_t len)
{
    if (len + 1 > s->size - s->used) {
        size_t size = len + 1 > CHUNK_SIZE ? len + 1 : CHUNK_SIZE;
        void **chunks = realloc(s->chunks, (s->nchunks + 1) * sizeof *chunks);
        if (!chunks)
            return NULL;
        s->chunks = chunks;
        char *chunk = malloc(size);
        if (!chunk)
            return NULL;
        s->chunks[s->nchunks++] = chunk;
        s->chunk = chunk;
        s->used = 0;
        s->size = size;
    }
    char *dst = s->chunk + s->used;
    memcpy(dst, str, len);
    dst[len] = '\0';
    s->used += len + 1;
    return dst;
}

static int grow_table(struct a2n_strings *s)
{
    size_t size = s->table_size ? s->table_size * 2 : 256;
    const char **table = calloc(size, sizeof *table);
    if (!table)
        return -1;
    for (size_t i = 0; i < s->table_size; i++) {
        const char *str = s->table[i];
        if (!str)
            continue;
        size_t j = hash_string(str) & (size - 1);
        while (table[j])
            j = (j + 1) & (size - 1);
        table[j] = str;
    }
    free(s->table);
    s->table = table;
    s->table_size = size;
    return 0;
}

const char *a2n_intern(struct a2n_strings *s, const char *str)
{
    if ((s->count + 1) * 2 > s->table_size && grow_table(s))
        return NULL;
    size_t mask = s->table_size - 1, i = hash_string(str) & mask;
    for (; s->table[i]; i = (i + 1) & mask)
        if (strcmp(s->table[i], str) == 0)
            return s->table[i];
    char *copy = arena_copy(s, str, strlen(str));
    if (!copy)
        return NULL;
    s->table[i] = copy;
    s->count++;
    return copy;
}

const char *a2n_internf(struct a2n_strings *s, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    if ((size_t)n < sizeof buf)
        return a2n_intern(s, buf);
    char *big = malloc((size_t)n + 1);
    if (!big)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    const char *r = a2n_intern(s, big);
    free(big);
    return r;
}

void a2n_strings_free(struct a2n_strings *s)
{
    for (size_t i = 0; i < s->nchunks; i++)
        free(s->chunks[i]);
    free(s->chunks);
    free(s->table);
    memset(s, 0, sizeof *s);
}
