/* The per-file table: struct iostats (profile/iostats.h) per libhookit
 * file record id, each under its own spinlock, as threads may share a
 * file.  Paths are copied into a pool of our own (the event's path is
 * libhookit's, valid for the call only).
 *
 * The accounting every I/O call runs is here, inline (a call into another
 * file costs a tenth of libjprof's part of an I/O call); start, reset,
 * fork and output are in metrics_files.c. */
#ifndef JPROF_METRICS_FILES_H
#define JPROF_METRICS_FILES_H

#include "metrics_internal.h"
#include "profile/iostats.h"

#define METRICS_MAX_FILES (1u << 18)

struct jfile {
    volatile int lock;
    int used; /* 0: the record starts anew at its next call */
    const char *path;
    struct iostats s;
};
/* NULL until metrics_files_start, or when it failed */
extern struct jfile *metrics_files __attribute__((visibility("hidden")));
extern uint32_t metrics_max_file __attribute__((visibility("hidden"))); /* highest id seen */

/* Under f's lock: its first call (since the start or a reset). */
void metrics_file_begin(struct jfile *f, const char *path);

/* dt: the call's time less a signal handler's during it (jp_wait_net). */
static inline void metrics_files_account(const struct hookit_io *io, uint64_t dt)
{
    if (!metrics_files || !io->file || io->file >= METRICS_MAX_FILES)
        return;
    struct jfile *f = &metrics_files[io->file];
    int failed = (io->flags & HOOKIT_IOF_FAILED) != 0;
    uint64_t t0 = metrics_cfg.start_tick;
    hk_spin_lock(&f->lock);
    if (JP_UNLIKELY(!f->used))
        metrics_file_begin(f, io->path);
    iostats_account_net(&f->s, io->op, failed, io->bytes, io->offset, io->t0 - t0, io->t1 - t0, dt);
    hk_spin_unlock(&f->lock);
    metrics_atomic_max32(&metrics_max_file, io->file);
}

#endif
