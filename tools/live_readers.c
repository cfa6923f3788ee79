/*
 * hookit snapshot --readers: a job on several hosts read at one moment
 * (docs/live.md "Several hosts").  The job's own launcher starts one reader
 * per host (`mpirun --map-by ppr:1:node hookit snapshot --readers --job ID`,
 * `srun --overlap ...`); the readers are an MPI job of their own:
 *
 *   every reader pauses its share of the job's processes (those on its
 *   host; readers sharing a host split them in blocks, in rank order),
 *   a barrier, every reader copies, a barrier, every reader releases;
 *
 * then each folds its share into a merge (profile/merge.h) and the partials
 * are reduced along the binomial tree over the readers, as the job's own
 * reduction at MPI_Finalize does, with its transport (profile/mpi_comm.h);
 * reader 0 writes one job snapshot, in the job profile's format.
 *
 * The reader is not linked with MPI: it loads the launcher's library
 * (Open MPI's libmpi.so.40 under OMPI_COMM_WORLD_*, MPICH's libmpich.so.12
 * under Hydra's PMI_*; HOOKIT_MPI_LIB names another) and calls it by name.
 * Every wait is bounded: a barrier within BARRIER_MAX_NS (a parked thread
 * goes on by itself after 0.5 s whatever happens), a partial within
 * HOOKIT_MPI_TIMEOUT (default 30 s) from each reader below.
 */
#include "tools/live_readers.h"
#include "tools/cli.h"
#include "tools/live_cli.h"
#include "profile/merge.h"
#include "profile/mpi_comm.h"
#include "profile/procinfo.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BARRIER_MAX_NS 200000000ull /* each of the two barriers: well inside the 0.5 s park bound */
#define ROWS_KEY "hookit.live.rows"
#define STATS_KEY "hookit.live.stats"

struct readers {
    int rank, size, local_rank, local_size;
    void *lib;
    uint64_t barrier_ns[2]; /* how long each barrier took this reader */
};

/* How long a reader waits for a share from below: HOOKIT_MPI_TIMEOUT
 * seconds (default 30), as the job's reduction at MPI_Finalize. */
static uint64_t partial_wait_ns(void)
{
    const char *v = getenv("HOOKIT_MPI_TIMEOUT");
    double s = v && *v ? strtod(v, NULL) : 30;
    return s > 0 && s <= 86400 ? (uint64_t)(s * 1e9) : 30000000000ull;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    char *end;
    long x = v && *v ? strtol(v, &end, 10) : -1;
    return v && *v && !*end && x >= 0 && x < 1 << 30 ? (int)x : dflt;
}

/* The launcher's MPI library, by what it put in the environment. */
static const char *mpi_library(void)
{
    const char *v = getenv("HOOKIT_MPI_LIB");
    if (v && *v)
        return v;
    if (getenv("OMPI_COMM_WORLD_SIZE"))
        return "libmpi.so.40";
    if (getenv("PMI_RANK") || getenv("PMI_FD"))
        return "libmpich.so.12";
    return NULL;
}

static int start(struct readers *r)
{
    const char *name = mpi_library();
    if (!name)
        return cli_fail("snapshot --readers: not started by an MPI launcher (mpirun, mpiexec, srun): "
                        "no OMPI_COMM_WORLD_SIZE or PMI_RANK; HOOKIT_MPI_LIB names the library");
    r->lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    int (*init)(int *, char ***) = r->lib ? (int (*)(int *, char ***))dlsym(r->lib, "PMPI_Init") : NULL;
    if (!init)
        return cli_fail("snapshot --readers: cannot load the MPI library %s: %s", name, dlerror());
    char err[256];
    if (init(NULL, NULL) != 0)
        return cli_fail("snapshot --readers: MPI_Init failed");
    if (mpi_comm_init(&r->rank, &r->size, err, sizeof err) != 0)
        return cli_fail("snapshot --readers: MPI: %s", err);
    /* readers sharing a host: the launcher's local rank and count */
    r->local_rank =
        env_int("OMPI_COMM_WORLD_LOCAL_RANK", env_int("MPI_LOCALRANKID", env_int("SLURM_LOCALID", 0)));
    r->local_size = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", env_int("MPI_LOCALNRANKS", 1));
    if (r->local_size < 1 || r->local_rank >= r->local_size)
        r->local_rank = 0, r->local_size = 1;
    return EXIT_OK;
}

static void end(struct readers *r)
{
    int (*fini)(void) = r->lib ? (int (*)(void))dlsym(r->lib, "PMPI_Finalize") : NULL;
    if (fini)
        fini();
}

/* The readers wait for each other: every process paused, then every
 * thread copied (live.h, struct live_sync). */
static int barrier(void *ctx, int step, char *err, size_t errlen)
{
    struct readers *r = ctx;
    uint64_t t0 = now_ns();
    int rc = mpi_comm_barrier(t0 + BARRIER_MAX_NS);
    r->barrier_ns[step == LIVE_SYNC_PAUSED ? 0 : 1] = now_ns() - t0;
    if (rc != 0)
        snprintf(err, errlen, "reader %d: %s at the barrier after %s: every process released, no snapshot",
                 r->rank, rc > 0 ? "the other readers did not all come within 200 ms" : "MPI error",
                 step == LIVE_SYNC_PAUSED ? "pausing" : "copying");
    return rc;
}

/* This reader's share: the block [k n / R, (k + 1) n / R) of the set (in
 * rank order), k and R its local rank and count; the others detached. */
static void take_share(const struct readers *r, struct live ***ls, uint32_t *n)
{
    uint32_t first = (uint32_t)((uint64_t)*n * (uint64_t)r->local_rank / (uint64_t)r->local_size);
    uint32_t last = (uint32_t)((uint64_t)*n * (uint64_t)(r->local_rank + 1) / (uint64_t)r->local_size);
    for (uint32_t i = 0; i < *n; i++)
        if (i < first || i >= last)
            live_detach((*ls)[i]);
    memmove(*ls, *ls + first, (size_t)(last - first) * sizeof **ls);
    *n = last - first;
}

/* What the readers below add up to: "processes threads pause_max pause_max_pid
 * pause_sum set_pause copy barrier_max" (the job's pause: the longest a reader
 * held its share; clocks of different hosts are not compared). */
struct stats {
    uint64_t processes, threads, pause_max, pause_max_pid, pause_sum, set_pause, copy, barrier_max;
};

static void stats_add(struct stats *a, const struct stats *b)
{
    a->processes += b->processes;
    a->threads += b->threads;
    if (b->pause_max >= a->pause_max) {
        a->pause_max = b->pause_max;
        a->pause_max_pid = b->pause_max_pid;
    }
    a->pause_sum += b->pause_sum;
    a->set_pause = b->set_pause > a->set_pause ? b->set_pause : a->set_pause;
    a->copy = b->copy > a->copy ? b->copy : a->copy;
    a->barrier_max = b->barrier_max > a->barrier_max ? b->barrier_max : a->barrier_max;
}

static int stats_text(char *buf, size_t size, const struct stats *s)
{
    return snprintf(buf, size,
                    "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
                    " %" PRIu64,
                    s->processes, s->threads, s->pause_max, s->pause_max_pid, s->pause_sum, s->set_pause,
                    s->copy, s->barrier_max);
}

static int stats_parse(const char *v, struct stats *s)
{
    return v
        && sscanf(v,
                  "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                  " %" SCNu64,
                  &s->processes, &s->threads, &s->pause_max, &s->pause_max_pid, &s->pause_sum, &s->set_pause,
                  &s->copy, &s->barrier_max)
        == 8;
}

/* Text appended to *text. */
static int append(char **text, const char *more)
{
    char *t = NULL;
    if (asprintf(&t, "%s%s", *text ? *text : "", more ? more : "") < 0)
        return -1;
    free(*text);
    *text = t;
    return 0;
}

/* The children's partials folded in after this reader's own share. */
static int take_children(const struct readers *r, struct merge *m, char **rows, struct stats *st)
{
    for (uint32_t step = 0; (step = merge_tree_next_child((uint32_t)r->rank, (uint32_t)r->size, step));) {
        unsigned char *buf = NULL;
        size_t len = 0;
        char err[256];
        int rc =
            mpi_comm_recv(r->rank + (int)step, &buf, &len, now_ns() + partial_wait_ns(), partial_wait_ns());
        struct profile *part = rc == 0 ? profile_read_mem(buf, len, "partial", err, sizeof err) : NULL;
        free(buf);
        struct stats child;
        int ok = part && stats_parse(profile_get_meta(part, STATS_KEY), &child)
            && append(rows, profile_get_meta(part, ROWS_KEY)) == 0 && merge_add_partial(m, part) == 0;
        profile_free(part);
        if (!ok)
            return cli_fail("snapshot --readers: reader %d: no share from readers %u-%u within the bound",
                            r->rank, r->rank + step,
                            r->rank + step + merge_tree_span((uint32_t)r->rank, (uint32_t)r->size, step) - 1);
        stats_add(st, &child);
    }
    return EXIT_OK;
}

static int send_up(const struct readers *r, struct merge *m, const char *rows, const struct stats *st)
{
    struct profile *part = merge_partial(m);
    char v[256];
    unsigned char *buf = NULL;
    size_t len = 0;
    stats_text(v, sizeof v, st);
    int ok = part && profile_set_meta(part, STATS_KEY, v) == 0
        && profile_set_meta(part, ROWS_KEY, rows ? rows : "") == 0
        && profile_write_mem(part, &buf, &len) == 0;
    int rc = ok
        ? mpi_comm_send((int)merge_tree_parent((uint32_t)r->rank), buf, len, now_ns() + partial_wait_ns())
        : -1;
    free(buf);
    profile_free(part);
    return rc == 0 ? EXIT_OK
                   : cli_fail("snapshot --readers: reader %d: its share did not reach reader %u", r->rank,
                              merge_tree_parent((uint32_t)r->rank));
}

/* Reader 0: the job snapshot. */
static int finish(const struct readers *r, struct merge *m, const char *rows, const struct stats *st,
                  enum live_consistency c, const char *out)
{
    if (!st->processes)
        return cli_fail("snapshot --readers: none of the %d readers found a process of the set", r->size);
    struct profile *p = merge_finish(m);
    struct live_set_pause sp = {
        .pause_ns = st->set_pause,
        .pause_sum_ns = st->pause_sum,
        .pause_max_ns = st->pause_max,
        .pause_max_pid = (pid_t)st->pause_max_pid,
        .copy_ns = st->copy,
        .threads = (uint32_t)st->threads,
    };
    int rc = p && live_set_meta(p, c, &sp, (uint32_t)st->processes, rows ? rows : "", UINT64_MAX) == 0
            && procinfo_set_meta_u64(p, "live_readers", (uint64_t)r->size) == 0
            && procinfo_set_meta_u64(p, "live_readers_barrier_max_ns", st->barrier_max) == 0
        ? live_cli_write(out, p)
        : cli_fail("out of memory making the job snapshot");
    if (rc == EXIT_OK) {
        static const char *const level[] = { "thread", "process", "job" };
        printf("wrote %s: %" PRIu64 " processes, %" PRIu64 " threads, %d readers, consistency %s", out,
               st->processes, st->threads, r->size, level[c]);
        if (c == LIVE_JOB)
            printf(", pause %.3f ms (the longest reader's; copying %.3f ms, the slowest barrier %.3f ms)",
                   st->set_pause / 1e6, st->copy / 1e6, st->barrier_max / 1e6);
        printf("\n");
    }
    profile_free(p);
    return rc;
}

static int read_share(struct readers *r, struct live **ls, uint32_t n, enum live_consistency c,
                      struct merge *m, char **rows, struct stats *st)
{
    struct live_snapshot *snaps = calloc(n + 1, sizeof *snaps);
    struct live_set_pause sp;
    struct live_sync sync = { barrier, r };
    char err[1024];
    if (!snaps)
        return cli_fail("out of memory");
    int rc = c == LIVE_JOB ? live_snapshot_set_sync(ls, n, snaps, &sp, &sync, err, sizeof err)
                           : live_snapshot_set(ls, n, c, snaps, &sp, err, sizeof err);
    if (rc != 0) {
        free(snaps);
        return cli_fail("%s", err);
    }
    size_t len = 0;
    FILE *f = open_memstream(rows, &len);
    if (f) {
        live_set_rows(f, ls, snaps, n);
        fclose(f);
    }
    rc = f && live_set_fold(m, ls, snaps, n, NULL) == 0 ? EXIT_OK : cli_fail("out of memory");
    *st = (struct stats){ n,
                          sp.threads,
                          sp.pause_max_ns,
                          (uint64_t)sp.pause_max_pid,
                          sp.pause_sum_ns,
                          c == LIVE_JOB ? sp.pause_ns : sp.pause_sum_ns,
                          sp.copy_ns,
                          r->barrier_ns[0] > r->barrier_ns[1] ? r->barrier_ns[0] : r->barrier_ns[1] };
    for (uint32_t i = 0; i < n; i++)
        live_snapshot_free(&snaps[i]);
    free(snaps);
    return rc;
}

int live_readers_snapshot(const struct live_set_sel *sel, enum live_consistency c, const char *out)
{
    struct readers r = { .local_size = 1 };
    if (start(&r) != EXIT_OK)
        return EXIT_FAIL;
    struct live **ls = NULL;
    uint32_t n = 0;
    /* a host with none of the job's processes still takes part */
    int rc = live_set_open(sel, "snapshot", LIVE_SET_MAY_BE_EMPTY, &ls, &n);
    if (rc == EXIT_OK) {
        take_share(&r, &ls, &n);
        struct merge *m = merge_new(0);
        char *rows = NULL;
        struct stats st = { 0 };
        rc = m ? read_share(&r, ls, n, c, m, &rows, &st) : cli_fail("out of memory");
        if (rc == EXIT_OK)
            rc = take_children(&r, m, &rows, &st);
        if (rc == EXIT_OK && r.rank > 0)
            rc = send_up(&r, m, rows, &st);
        else if (rc == EXIT_OK)
            rc = finish(&r, m, rows, &st, c, out);
        free(rows);
        merge_free(m);
        live_set_close(ls, n);
    }
    end(&r);
    return rc;
}
