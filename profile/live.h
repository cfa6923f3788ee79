/*
 * Live reading of a profiled process (docs/live.md): attach to the arena a
 * process registered (profile/registry.h), take snapshots of its trees
 * without stopping it, send it commands.  Used by `hookit top`,
 * `snapshot`, `ctl` and `recover`.
 */
#ifndef HOOKIT_LIVE_H
#define HOOKIT_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/arena.h"
#include "profile/profile.h"

struct live;

#define LIVE_DEAD_OK 0x1        /* attach to a dead process's leftover (recover) */

/* Attach to pid's arena, read-only.  Refuses (NULL, reason in err) a
 * process of another user (unless we are root), an unsafe registry
 * directory or arena file, a foreign or stale arena (pid reused). */
struct live *live_attach(pid_t pid, int flags, char *err, size_t errlen);
void live_detach(struct live *l);
/* Whether the attached process still runs. */
int live_alive(const struct live *l);
pid_t live_pid(const struct live *l);
const char *live_exe(const struct live *l);
/* The arena file's path (recover removes it and its .maps). */
const char *live_arena_path(const struct live *l);
/* Whether pid's registry holds an arena marked ended (ARENA_MAGIC_ENDED:
 * the process ended normally but could not remove it); its path in path. */
int live_leftover_ended(pid_t pid, char *path, size_t size);

/* thread: each thread's copy whole; process: all of a process's threads
 * at one moment; job: all threads of several processes at one moment
 * (live_snapshot_set; docs/live.md "Several processes"). */
enum live_consistency { LIVE_THREAD = 0, LIVE_PROCESS = 1, LIVE_JOB = 2 };

/* One thread as copied. */
struct live_thread {
    int32_t tid;
    uint32_t index, state;
    int waiting; /* in a blocking call hookit times (ARENA_REQ_WAIT) */
    char name[17];
    uint64_t dropped, unmatched;
    struct arena_copy_node *nodes;  /* preorder, parent as index */
    uint32_t nnodes;
    struct arena_frame *stack;      /* stack[0 .. depth] */
    uint32_t depth;
    uint64_t now;                   /* ticks: the moment the copy stands for */
    uint32_t pending;               /* a reset or zerobase shown applied (ARENA_REQ_PENDING bits) */
    uint64_t pending_at;            /* ... as of this moment (ticks) */
    int how;                        /* LIVE_COPY_* */
    uint32_t retries;               /* torn copies thrown away */
};
enum { LIVE_COPY_SEQ = 0, LIVE_COPY_SELF = 1, LIVE_COPY_PARKED = 2, LIVE_COPY_DEAD = 3 };

struct live_snapshot {
    struct live_thread *threads;    /* by index */
    uint32_t nthreads;
    double ticks_per_ns;
    uint64_t now;                   /* ticks, the snapshot's moment */
    uint64_t mono_ns;               /* CLOCK_MONOTONIC of the snapshot */
    enum live_consistency consistency;
    /* process consistency: */
    uint64_t pause_ns;              /* from asking threads to park to releasing them */
    uint64_t gather_ns;             /* until every thread was parked or quiet */
    uint32_t parked, quiet;         /* threads parked / outside any hook (not waited for) */
    uint64_t copy_ns;               /* copying, from the end of gathering to the release */
    uint32_t recopied;              /* copies taken again: the thread had moved meanwhile */
    /* What of the pause was not the reader's own work: how often it slept
     * waiting (for a thread to park, to retake a copy, for the clock), and
     * how long it waited for a CPU while runnable (the scheduler's share,
     * from /proc/thread-self/schedstat over a window just around the
     * pause; UINT64_MAX when the kernel does not say). */
    uint32_t waits;
    uint64_t runnable_ns;
    /* job consistency: the whole set's pause, from the first process
     * asked to the last released, and how many processes it held */
    uint64_t set_pause_ns;
    uint32_t set_processes;
};

/* A snapshot.  0, or -1 with err. */
int live_snapshot(struct live *l, enum live_consistency c, struct live_snapshot *s,
                  char *err, size_t errlen);
void live_snapshot_free(struct live_snapshot *s);

/* Several processes (n), snaps[i] of ls[i].  LIVE_THREAD and LIVE_PROCESS
 * take them one after the other (for process, each consistent on its own:
 * TAU's radial sweep); LIVE_JOB pauses every thread of every process at
 * once, copies them all, then releases them all.  What the pause cost: */
struct live_set_pause {
    uint64_t pause_ns;     /* job: first request to last release; else the sum */
    uint64_t pause_sum_ns; /* the processes' own pauses, summed */
    uint64_t pause_max_ns; /* the longest a process was paused, and which */
    pid_t pause_max_pid;
    uint64_t copy_ns; /* copying (job: all of it; else summed) */
    uint64_t wall_ns; /* the whole set's snapshot */
    uint32_t threads;
};
int live_snapshot_set(struct live **ls, uint32_t n, enum live_consistency c, struct live_snapshot *snaps,
                      struct live_set_pause *sp, char *err, size_t errlen);
/* The job level with other readers (a job on several hosts: docs/live.md
 * "Several hosts"): sync->at(ctx, step) is called once every pause word
 * was tried, without waiting (LIVE_SYNC_TAKEN: all taken; LIVE_SYNC_BUSY:
 * another reader holds one), before any thread is asked to park, to learn
 * whether every reader took all of its own (0), or to release them and
 * try again (LIVE_SYNC_AGAIN); once every process is paused
 * (LIVE_SYNC_PAUSED) and once every thread is copied (LIVE_SYNC_COPIED),
 * before the release, so that the readers wait for each other there (a
 * barrier).  Any other non-zero gives up (everything released, -1 with
 * err).  Called also with no process at all (n = 0). */
enum { LIVE_SYNC_PAUSED = 1, LIVE_SYNC_COPIED = 2, LIVE_SYNC_TAKEN = 3, LIVE_SYNC_BUSY = 4 };
#define LIVE_SYNC_AGAIN 2
struct live_sync {
    int (*at)(void *ctx, int step, char *err, size_t errlen);
    void *ctx;
};
int live_snapshot_set_sync(struct live **ls, uint32_t n, struct live_snapshot *snaps,
                           struct live_set_pause *sp, const struct live_sync *sync, char *err, size_t errlen);

/* The MPI job the process is a rank of (profile/arena.h, struct
 * arena_job): 1 with *j filled, 0 when it is no rank (or not yet). */
struct live_job {
    int32_t rank, size;
    uint32_t launcher;
    char id[ARENA_JOB_ID_MAX];
};
int live_job_of(const struct live *l, struct live_job *j);

/* A normal profile of a snapshot.  Frames that are not machine code (MPI
 * calls, Java methods) are named from the arena; the other functions'
 * names are not filled in yet (name NULL: the caller resolves
 * p->funcs[i].addr, e.g. through A2N).  end is the profile's "end"
 * metadata ("snapshot", "killed"). */
struct profile *live_profile(struct live *l, const struct live_snapshot *s, const char *end);

/* Send an ARENA_CMD_* and wait (at most timeout_ms) until a thread of the
 * process carried it out.  0 with *result (0 or an errno value), or -1
 * with the reason in err. */
int live_command(struct live *l, uint32_t cmd, int timeout_ms, uint32_t *result,
                 char *err, size_t errlen);

/* Pids registered in user uid's registry (malloc'ed array, count returned,
 * -1 with err when the registry is unusable). */
int live_list(uid_t uid, pid_t **pids, char *err, size_t errlen);

/* The registry directory used for pid (its owner's). */
int live_registry_for(pid_t pid, char *dir, size_t size, char *err, size_t errlen);

#endif
