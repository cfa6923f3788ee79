/* The per-file table: struct iostats (profile/iostats.h) per libhookit
 * file record id, each under its own spinlock, as threads may share a
 * file.  Paths are copied into a pool of our own (the event's path is
 * libhookit's, valid for the call only). */
#include "metrics_internal.h"
#include "profile/iostats.h"

#include <stdlib.h>
#include <string.h>

#define MAX_FILES (1u << 18)
#define POOL_BYTES (64ull << 20)

struct jfile {
    volatile int lock;
    int used; /* 0: the record starts anew at its next call */
    const char *path;
    struct iostats s;
};
static struct jfile *files;
static uint32_t max_file; /* highest id seen */
static char *pool;
static uint64_t pool_used;

/* Reserved once: a fork child or a second start keeps the table. */
JP_NOINSTR int metrics_files_start(void)
{
    if (files)
        return 0;
    pool = metrics_reserve(POOL_BYTES);
    files = pool ? metrics_reserve((size_t)MAX_FILES * sizeof *files) : NULL;
    return files ? 0 : -1;
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

JP_NOINSTR void metrics_files_account(const struct hookit_io *io)
{
    if (!files || !io->file || io->file >= MAX_FILES)
        return;
    struct jfile *f = &files[io->file];
    int failed = (io->flags & HOOKIT_IOF_FAILED) != 0;
    uint64_t t0 = metrics_cfg.start_tick;
    hk_spin_lock(&f->lock);
    if (!f->used) {
        iostats_init(&f->s);
        if (!f->path && io->path)
            f->path = pool_copy(io->path);
        f->used = 1;
    }
    iostats_account(&f->s, io->op, failed, io->bytes, io->offset, io->t0 - t0, io->t1 - t0);
    hk_spin_unlock(&f->lock);
    metrics_atomic_max32(&max_file, io->file);
}

/* No lock taken: this may run in an instrumented signal handler that
 * interrupted this very thread inside metrics_files_account; a record's
 * next call starts it anew (a call made at the same moment is dropped
 * with the old numbers). */
JP_NOINSTR void metrics_files_clear(void)
{
    for (uint32_t id = 1; files && id <= max_file; id++)
        __atomic_store_n(&files[id].used, 0, __ATOMIC_RELAXED);
}

/* Only the forking thread survives: a lock another thread held stays
 * taken in the child unless it is let go here. */
JP_NOINSTR void metrics_files_fork_child(void)
{
    for (uint32_t id = 0; files && id <= max_file; id++) {
        files[id].lock = 0;
        files[id].used = 0;
    }
    max_file = 0;
}

/* The io_files metadata: one row per record used since the start (or the
 * last reset/zerobase). */
JP_NOINSTR int metrics_files_meta(struct profile *p, double ticks_per_ns)
{
    uint32_t n = 0;
    for (uint32_t id = 1; files && id <= max_file; id++)
        n += files[id].used;
    struct iostats_row *rows = calloc(n + 1, sizeof *rows);
    if (!rows)
        return -1;
    uint32_t k = 0;
    for (uint32_t id = 1; files && id <= max_file && k < n; id++) {
        struct jfile *f = &files[id];
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
