/*
 * What the live reader's files share (live.c: attaching, copying one
 * thread, profiles, commands; live_pause.c: pausing one or several
 * processes at once).  Not for the tools: they use live.h.
 */
#ifndef HOOKIT_LIVE_INTERNAL_H
#define HOOKIT_LIVE_INTERNAL_H

#include "profile/arena_walk.h"
#include "profile/live.h"
#include "profile/registry.h"

#include <sys/stat.h>

#define LIVE_MAX_THREADS 65536

struct live {
    pid_t pid;
    int dead;
    char path[REGISTRY_PATH_MAX + 64];
    const char *base; /* read-only mapping */
    char *rw;         /* writable mapping, made on demand */
    uint64_t size;
    dev_t dev;
    ino_t ino;
    struct arena_view view;
    char exe[4096];
    uint32_t seq_tries; /* torn copies before asking the thread */
};

static inline const struct arena_header *live_header(const struct live *l)
{
    return (const struct arena_header *)l->base;
}

static inline const struct arena_process *live_process_block(const struct live *l)
{
    return (const struct arena_process *)(l->base + ARENA_SLOT);
}

/* The object at ref, size bytes, inside the mapping; NULL otherwise. */
static inline const void *live_at(const struct live *l, arena_ref ref, uint64_t size)
{
    uint64_t off = (uint64_t)ref * ARENA_SLOT;
    if (!ref || off + size > l->size || off + size < off)
        return NULL;
    return l->base + off;
}

/* The same object in the writable mapping (live_make_writable first). */
static inline void *live_at_rw(struct live *l, const volatile void *ro)
{
    return l->rw ? l->rw + ((const volatile char *)ro - l->base) : NULL;
}

int live_make_writable(struct live *l, char *err, size_t errlen);

/* Times this reader thread slept waiting for something (the process's
 * threads, the clock): a pause counts those it contains
 * (live_snapshot.waits), which tells a pause that waited for a thread from
 * one the scheduler made long. */
extern __thread uint32_t live_reader_waits;
void live_nap_us(long us);

/* The process's clock now, and its rate measured from the start pair it
 * stored; live_clock_now: the clock alone, once the rate is known. */
uint64_t live_process_now(const struct live *l, double *ticks_per_ns);
uint64_t live_clock_now(const struct live *l);

/* The thread records, newest first as listed; at most max. */
uint32_t live_thread_list(const struct live *l, const struct arena_thread **recs, uint32_t max);
/* One thread's copy into t, whose buffers it then owns (also on failure).
 * 0, or -1 with err. */
int live_copy_thread(struct live *l, const struct arena_thread *rec, struct live_thread *t, char *err,
                     size_t errlen);

/* live_pause.c: the paused snapshot of n processes at once (n = 1: the
 * process level), each snaps[i] prepared by live_snapshot's first steps
 * (threads allocated for recs[i]'s n[i] records), with other readers when
 * sync is not NULL (live.h).  0, or -1 with err. */
int live_pause_snapshots(struct live **ls, const struct arena_thread ***recs, const uint32_t *nrecs,
                         uint32_t n, struct live_snapshot *snaps, const struct live_sync *sync, char *err,
                         size_t errlen);

#endif
