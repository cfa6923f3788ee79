/* The per-file table's slow half (metrics_files.h has the accounting
 * every I/O call runs): start, paths, reset, fork and output. */
#include "metrics_files.h"

#include <stdlib.h>
#include <string.h>

#define POOL_BYTES (64ull << 20)

struct jfile *metrics_files;
uint32_t metrics_max_file;
static char *pool;
static uint64_t pool_used;

/* Reserved once: a fork child or a second start keeps the table. */
JP_NOINSTR int metrics_files_start(void)
{
    if (metrics_files)
        return 0;
    pool = metrics_reserve(POOL_BYTES);
    metrics_files = pool ? metrics_reserve((size_t)METRICS_MAX_FILES * sizeof *metrics_files) : NULL;
    return metrics_files ? 0 : -1;
}

/* NULL once the pool is full: the file is then shown without a path. */
JP_NOINSTR static const char *pool_copy(const char *s)
{
    size_t len = strlen(s) + 1;
    uint64_t at = __atomic_fetch_add(&pool_used, (len + 7) & ~7ull, __ATOMIC_RELAXED);
    if (at + len > POOL_BYTES)
        return NULL;
    memcpy(pool + at, s, len);
    return pool + at;
}

/* A record's first call since the start or a reset: its numbers start,
 * and the first path seen for it is kept.  Out of line: once per record. */
JP_NOINSTR void metrics_file_begin(struct jfile *f, const char *path)
{
    iostats_init(&f->s);
    if (!f->path && path)
        f->path = pool_copy(path);
    f->used = 1;
}

/* No lock taken: this may run in an instrumented signal handler that
 * interrupted this very thread inside metrics_files_account; a record's
 * next call starts it anew (a call made at the same moment is dropped
 * with the old numbers). */
JP_NOINSTR void metrics_files_clear(void)
{
    for (uint32_t id = 1; metrics_files && id <= metrics_max_file; id++)
        __atomic_store_n(&metrics_files[id].used, 0, __ATOMIC_RELAXED);
}

/* Only the forking thread survives: a lock another thread held stays
 * taken in the child unless it is let go here. */
JP_NOINSTR void metrics_files_fork_child(void)
{
    for (uint32_t id = 0; metrics_files && id <= metrics_max_file; id++) {
        metrics_files[id].lock = 0;
        metrics_files[id].used = 0;
    }
    metrics_max_file = 0;
}

/* The io_files metadata: one row per record used since the start (or the
 * last reset/zerobase). */
JP_NOINSTR int metrics_files_meta(struct profile *p, double ticks_per_ns)
{
    uint32_t n = 0;
    for (uint32_t id = 1; metrics_files && id <= metrics_max_file; id++)
        n += metrics_files[id].used;
    struct iostats_row *rows = calloc(n + 1, sizeof *rows);
    if (!rows)
        return -1;
    uint32_t k = 0;
    for (uint32_t id = 1; metrics_files && id <= metrics_max_file && k < n; id++) {
        struct jfile *f = &metrics_files[id];
        if (!f->used)
            continue;
        hk_spin_lock(&f->lock);
        rows[k].id = id;
        rows[k].path = f->path ? f->path : "";
        rows[k].s = f->s;
        hk_spin_unlock(&f->lock);
        k++;
    }
    char *text = iostats_format(rows, k, ticks_per_ns);
    free(rows);
    if (!text)
        return -1;
    int rc = profile_set_meta(p, "io_files", text);
    free(text);
    return rc;
}
