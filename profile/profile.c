/*
 * The profile model: an arena that owns every string and array of a
 * profile, string interning, metadata and metric look-ups.
 *
 * The arena hands out zeroed, 16-byte aligned blocks carved from 64 KiB
 * chunks; a large request (a thread's node array) gets a chunk of its own so
 * a profiler can preallocate big arrays without wasting the current chunk.
 * Nothing is freed individually: profile_free releases every chunk.
 */
#include "profile/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PUBLIC __attribute__((visibility("default")))

#define CHUNK_SIZE   (64 * 1024)
#define ALIGN        16
#define BIG_REQUEST  (CHUNK_SIZE / 4)

struct chunk {
    struct chunk *next;
    size_t size;                    /* usable bytes after the header */
    _Alignas(ALIGN) unsigned char data[];
};

struct prof_arena {
    struct chunk *chunks;           /* head is the chunk being carved */
    size_t used;                    /* bytes used in the head chunk */
    /* Interned strings: open addressing, linear probing, power-of-2 size. */
    const char **slots;
    size_t nslots, nstrings;
    /* Capacity of the meta array that profile_set_meta grows. */
    struct prof_meta *meta_array;
    uint32_t meta_cap;
};

static struct chunk *chunk_new(size_t size)
{
    if (size > SIZE_MAX - sizeof(struct chunk))
        return NULL;
    struct chunk *c = calloc(1, sizeof(struct chunk) + size);
    if (c)
        c->size = size;
    return c;
}

PUBLIC struct profile *profile_new(void)
{
    struct profile *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->arena = calloc(1, sizeof *p->arena);
    if (!p->arena) {
        free(p);
        return NULL;
    }
    p->process.rank = -1;
    p->process.size = -1;
    return p;
}

PUBLIC void profile_free(struct profile *p)
{
    if (!p)
        return;
    if (p->arena) {
        struct chunk *c = p->arena->chunks;
        while (c) {
            struct chunk *next = c->next;
            free(c);
            c = next;
        }
        free(p->arena->slots);
        free(p->arena);
    }
    free(p);
}

PUBLIC void *profile_alloc(struct profile *p, size_t size)
{
    struct prof_arena *a = p->arena;
    if (size == 0)
        size = 1;
    if (size > SIZE_MAX - ALIGN)
        return NULL;
    size = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);

    if (size >= BIG_REQUEST) {
        /* A chunk of its own, linked behind the head so the head keeps
         * serving small requests. */
        struct chunk *c = chunk_new(size);
        if (!c)
            return NULL;
        if (a->chunks) {
            c->next = a->chunks->next;
            a->chunks->next = c;
        } else {
            a->chunks = c;
            a->used = size;
        }
        return c->data;
    }
    if (!a->chunks || a->chunks->size - a->used < size) {
        struct chunk *c = chunk_new(CHUNK_SIZE);
        if (!c)
            return NULL;
        c->next = a->chunks;
        a->chunks = c;
        a->used = 0;
    }
    void *r = a->chunks->data + a->used;
    a->used += size;
    return r;
}

static size_t hash_string(const char *s)
{
    /* FNV-1a */
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *q = (const unsigned char *)s; *q; q++)
        h = (h ^ *q) * 1099511628211ull;
    return (size_t)h;
}

static int intern_grow(struct prof_arena *a)
{
    size_t n = a->nslots ? a->nslots * 2 : 256;
    const char **slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < a->nslots; i++) {
        const char *s = a->slots[i];
        if (!s)
            continue;
        size_t j = hash_string(s) & (n - 1);
        while (slots[j])
            j = (j + 1) & (n - 1);
        slots[j] = s;
    }
    free(a->slots);
    a->slots = slots;
    a->nslots = n;
    return 0;
}

/* Equal strings give the same pointer, so a writer can compare names by
 * address and the file's string table stays small. */
PUBLIC const char *profile_intern(struct profile *p, const char *s)
{
    if (!s)
        return NULL;
    struct prof_arena *a = p->arena;
    if (a->nstrings * 2 >= a->nslots && intern_grow(a) < 0)
        return NULL;
    size_t mask = a->nslots - 1;
    size_t j = hash_string(s) & mask;
    for (; a->slots[j]; j = (j + 1) & mask)
        if (strcmp(a->slots[j], s) == 0)
            return a->slots[j];
    size_t len = strlen(s);
    char *copy = profile_alloc(p, len + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, len + 1);
    a->slots[j] = copy;
    a->nstrings++;
    return copy;
}

int profile_name_func(struct profile *p, struct prof_func *f, const char *name, const char *module,
                      const char *file, unsigned line)
{
    f->name = profile_intern(p, name ? name : "?");
    f->module = profile_intern(p, module ? module : "");
    f->file = file ? profile_intern(p, file) : NULL;
    f->line = line;
    return f->name && f->module ? 0 : -1;
}

PUBLIC int profile_set_meta(struct profile *p, const char *key, const char *value)
{
    const char *k = profile_intern(p, key ? key : "");
    const char *v = profile_intern(p, value ? value : "");
    if (!k || !v)
        return -1;
    struct prof_process *pr = &p->process;
    for (uint32_t i = 0; i < pr->nmeta; i++) {
        if (strcmp(pr->meta[i].key, k) == 0) {
            pr->meta[i].value = v;
            return 0;
        }
    }
    struct prof_arena *a = p->arena;
    /* The caller may have installed an array of its own: copy it then. */
    uint32_t cap = a->meta_array == pr->meta ? a->meta_cap : pr->nmeta;
    if (pr->nmeta == UINT32_MAX)
        return -1;
    if (pr->nmeta == cap) {
        uint32_t ncap = cap < 8 ? 8 : (cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2);
        struct prof_meta *m = profile_alloc(p, (size_t)ncap * sizeof *m);
        if (!m)
            return -1;
        if (pr->nmeta)
            memcpy(m, pr->meta, pr->nmeta * sizeof *m);
        pr->meta = a->meta_array = m;
        a->meta_cap = ncap;
    }
    pr->meta[pr->nmeta].key = k;
    pr->meta[pr->nmeta].value = v;
    pr->nmeta++;
    return 0;
}

PUBLIC const char *profile_get_meta(const struct profile *p, const char *key)
{
    for (uint32_t i = 0; i < p->process.nmeta; i++)
        if (p->process.meta[i].key && strcmp(p->process.meta[i].key, key) == 0)
            return p->process.meta[i].value;
    return NULL;
}

PUBLIC int profile_meta_u64(const struct profile *p, const char *key, uint64_t *v)
{
    const char *s = profile_get_meta(p, key);
    char *end;
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (*end || errno)
        return -1;
    *v = x;
    return 0;
}

PUBLIC const struct prof_metric *profile_find_metric(const struct prof_thread *t,
                                                     const char *name)
{
    for (uint32_t i = 0; i < t->nmetrics; i++)
        if (t->metrics[i].name && strcmp(t->metrics[i].name, name) == 0)
            return &t->metrics[i];
    return NULL;
}

PUBLIC uint64_t *profile_new_column(struct profile *p, struct prof_thread *th, const char *name, uint32_t n)
{
    struct prof_metric *m = profile_alloc(p, (th->nmetrics + 1) * sizeof *m);
    uint64_t *values = profile_alloc(p, (size_t)n * sizeof *values + 1);
    const char *key = profile_intern(p, name);
    if (!m || !values || !key)
        return NULL;
    if (th->nmetrics)
        memcpy(m, th->metrics, th->nmetrics * sizeof *m);
    m[th->nmetrics] = (struct prof_metric){ .name = key, .values = values };
    th->metrics = m;
    th->nmetrics++;
    return values;
}
