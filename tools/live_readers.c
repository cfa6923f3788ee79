/*
 * The readers of a job on several hosts, each round read at one moment
 * (docs/live.md "Several hosts"): `hookit snapshot --readers` is one
 * round, `hookit top --readers` one every refresh (top_readers.c).  The job's own launcher starts one reader
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
 * HOOKIT_MPI_TIMEOUT (default 30 s) from each reader below, top's word to
 * go on within readers_word's bound.  A reader that gave up on another
 * skips MPI_Finalize, which would wait for the lost one.
 */
#include "tools/live_readers.h"
#include "tools/cli.h"
#include "tools/live_cli.h"
#include "tools/top_view.h"
#include "profile/merge.h"
#include "profile/mpi_comm.h"
#include "profile/procinfo.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BARRIER_MAX_NS 200000000ull /* each of the two barriers: well inside the 0.5 s park bound */
#define TAKE_MAX_NS 2000000000ull   /* readers of other clients keep some pause words: then give up */
#define AGREE_MAX_NS 1000000000ull  /* each step of agreeing on the pause words (nobody paused yet) */
#define ROWS_KEY "hookit.live.rows"
#define STATS_KEY "hookit.live.stats"
#define VIEW_KEY "hookit.live.view"
#define NOTES_KEY "hookit.live.notes"
#define WORD_SEND_NS 2000000000ull /* a reader below takes the word: it waits for it already */

struct readers {
    int rank, size, local_rank, local_size;
    const char *cmd;
    void *lib;
    int lost;               /* a reader did not come: no MPI_Finalize */
    uint64_t busy_since;    /* reader 0: since when some pause word was another client's */
    uint64_t barrier_ns[2]; /* how long each barrier took this reader */
};

/* How long a reader waits for a share from below: HOOKIT_MPI_TIMEOUT
 * seconds (default 30), as the job's reduction at MPI_Finalize. */
uint64_t readers_partial_wait_ns(void)
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

struct readers *readers_start(const char *cmd)
{
    struct readers *r = calloc(1, sizeof *r);
    if (!r) {
        cli_fail("out of memory");
        return NULL;
    }
    r->cmd = cmd;
    const char *name = mpi_library();
    if (!name) {
        cli_fail("%s --readers: not started by an MPI launcher (mpirun, mpiexec, srun): "
                 "no OMPI_COMM_WORLD_SIZE or PMI_RANK; HOOKIT_MPI_LIB names the library",
                 cmd);
        free(r);
        return NULL;
    }
    r->lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    int (*init)(int *, char ***) = r->lib ? (int (*)(int *, char ***))dlsym(r->lib, "PMPI_Init") : NULL;
    char err[256];
    int started = 0;
    if (!init)
        cli_fail("%s --readers: cannot load the MPI library %s: %s", cmd, name, dlerror());
    else if (init(NULL, NULL) != 0)
        cli_fail("%s --readers: MPI_Init failed", cmd);
    else if (mpi_comm_init(&r->rank, &r->size, err, sizeof err) != 0)
        cli_fail("%s --readers: MPI: %s", cmd, err);
    else
        started = 1;
    if (!started) {
        free(r);
        return NULL;
    }
    /* readers sharing a host: the launcher's local rank and count */
    r->local_rank =
        env_int("OMPI_COMM_WORLD_LOCAL_RANK", env_int("MPI_LOCALRANKID", env_int("SLURM_LOCALID", 0)));
    r->local_size = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", env_int("MPI_LOCALNRANKS", 1));
    if (r->local_size < 1 || r->local_rank >= r->local_size)
        r->local_rank = 0, r->local_size = 1;
    return r;
}

void readers_end(struct readers *r)
{
    int (*fini)(void) = r->lib ? (int (*)(void))dlsym(r->lib, "PMPI_Finalize") : NULL;
    fflush(NULL);
    if (r->lost) {
        /* Neither MPI_Finalize nor exit: both can wait for the lost reader
         * (MPICH's exit handlers did, for 30 s), and this reader holds
         * nothing of the processes it read any more. */
        _exit(EXIT_FAIL);
    }
    if (fini)
        fini();
    free(r);
}

int readers_rank(const struct readers *r)
{
    return r->rank;
}

int readers_size(const struct readers *r)
{
    return r->size;
}

/* Whether every reader took every pause word of its share: each one's
 * answer and'ed up the tree to reader 0, whose decision comes down: go on
 * ('g'), release and try again ('a'), or give up ('x': another client
 * kept some for TAKE_MAX_NS).  Each step within AGREE_MAX_NS: nobody is
 * paused yet.  0,
 * LIVE_SYNC_AGAIN, or 1 / -1 with err. */
static int agree(struct readers *r, int taken, char *err, size_t errlen)
{
    unsigned char all = taken ? 'g' : 'a', *buf = NULL;
    size_t len = 0;
    int rc = 0;
    for (uint32_t step = 0;
         rc == 0 && (step = merge_tree_next_child((uint32_t)r->rank, (uint32_t)r->size, step));) {
        rc = mpi_comm_recv(r->rank + (int)step, &buf, &len, now_ns() + AGREE_MAX_NS, AGREE_MAX_NS);
        if (rc == 0 && !(len == 1 && buf[0] == 'g'))
            all = 'a';
        free(buf);
        buf = NULL;
    }
    int parent = (int)merge_tree_parent((uint32_t)r->rank);
    if (rc == 0 && r->rank > 0)
        rc = mpi_comm_send(parent, &all, 1, now_ns() + AGREE_MAX_NS);
    if (rc == 0 && r->rank > 0) {
        rc = mpi_comm_recv(parent, &buf, &len, now_ns() + AGREE_MAX_NS, AGREE_MAX_NS);
        all = rc == 0 && len == 1 ? buf[0] : 'x';
        free(buf);
    } else if (rc == 0 && all != 'g') {
        if (!r->busy_since)
            r->busy_since = now_ns();
        if (now_ns() - r->busy_since > TAKE_MAX_NS)
            all = 'x';
    }
    for (uint32_t step = 0;
         rc == 0 && (step = merge_tree_next_child((uint32_t)r->rank, (uint32_t)r->size, step));)
        rc = mpi_comm_send(r->rank + (int)step, &all, 1, now_ns() + AGREE_MAX_NS);
    if (rc != 0) {
        r->lost = 1;
        snprintf(err, errlen,
                 "%s --readers: reader %d: the other readers did not all answer within 1 s whether "
                 "they had their processes' pause words: no %s",
                 r->cmd, r->rank, strcmp(r->cmd, "top") ? "snapshot" : "more views");
        return rc;
    }
    if (all == 'x') {
        snprintf(err, errlen,
                 "%s --readers: reader %d: another reader kept some of the processes paused for %.0f s",
                 r->cmd, r->rank, TAKE_MAX_NS / 1e9);
        return 1;
    }
    if (all == 'g')
        r->busy_since = 0;
    return all == 'g' ? 0 : LIVE_SYNC_AGAIN;
}

/* The readers wait for each other: every process paused, then every
 * thread copied (live.h, struct live_sync). */
static int barrier(void *ctx, int step, char *err, size_t errlen)
{
    struct readers *r = ctx;
    if (step == LIVE_SYNC_TAKEN || step == LIVE_SYNC_BUSY)
        return agree(r, step == LIVE_SYNC_TAKEN, err, errlen);
    uint64_t t0 = now_ns();
    int rc = mpi_comm_barrier(t0 + BARRIER_MAX_NS);
    r->barrier_ns[step == LIVE_SYNC_PAUSED ? 0 : 1] = now_ns() - t0;
    if (rc != 0) {
        r->lost = 1;
        snprintf(err, errlen,
                 "%s --readers: reader %d: %s at the barrier after %s: every process released, no %s", r->cmd,
                 r->rank, rc > 0 ? "the other readers did not all come within 200 ms" : "MPI error",
                 step == LIVE_SYNC_PAUSED ? "pausing" : "copying",
                 strcmp(r->cmd, "top") ? "snapshot" : "more views");
    }
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

int readers_open_share(struct readers *r, const struct live_set_sel *sel, struct live ***ls, uint32_t *n)
{
    /* a host with none of the job's processes still takes part */
    int rc = live_set_open(sel, r->cmd, LIVE_SET_MAY_BE_EMPTY, ls, n);
    if (rc == EXIT_OK)
        take_share(r, ls, n);
    return rc;
}

static void stats_add(struct readers_stats *a, const struct readers_stats *b)
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

/* "processes threads pause_max pause_max_pid pause_sum set_pause copy barrier_max" */
static int stats_text(char *buf, size_t size, const struct readers_stats *s)
{
    return snprintf(buf, size,
                    "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
                    " %" PRIu64,
                    s->processes, s->threads, s->pause_max, s->pause_max_pid, s->pause_sum, s->set_pause,
                    s->copy, s->barrier_max);
}

static int stats_parse(const char *v, struct readers_stats *s)
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

/* A child's partial folded in: its merge, rows, notes, stats, view. */
static int take_partial(struct readers_round *out, const struct profile *part)
{
    struct readers_stats child;
    if (!stats_parse(profile_get_meta(part, STATS_KEY), &child)
        || append(&out->rows, profile_get_meta(part, ROWS_KEY)) != 0
        || append(&out->notes, profile_get_meta(part, NOTES_KEY)) != 0
        || (out->view && top_view_add_text(out->view, profile_get_meta(part, VIEW_KEY)) != 0)
        || merge_add_partial(out->m, part) != 0)
        return -1;
    stats_add(&out->st, &child);
    return 0;
}

/* The children's partials folded in after this reader's own share. */
static int take_children(struct readers *r, struct readers_round *out)
{
    for (uint32_t step = 0; (step = merge_tree_next_child((uint32_t)r->rank, (uint32_t)r->size, step));) {
        unsigned char *buf = NULL;
        size_t len = 0;
        char err[256];
        uint64_t bound = readers_partial_wait_ns();
        int rc = mpi_comm_recv(r->rank + (int)step, &buf, &len, now_ns() + bound, bound);
        struct profile *part = rc == 0 ? profile_read_mem(buf, len, "partial", err, sizeof err) : NULL;
        free(buf);
        int ok = part && take_partial(out, part) == 0;
        profile_free(part);
        if (!ok) {
            r->lost |= rc != 0;
            return cli_fail("%s --readers: reader %d: no share from readers %u-%u within the bound", r->cmd,
                            r->rank, r->rank + step,
                            r->rank + step + merge_tree_span((uint32_t)r->rank, (uint32_t)r->size, step) - 1);
        }
    }
    return EXIT_OK;
}

static int send_up(struct readers *r, const struct readers_round *out)
{
    struct profile *part = merge_partial(out->m);
    char v[256];
    unsigned char *buf = NULL;
    size_t len = 0;
    char *view = out->view ? top_view_text(out->view) : NULL;
    stats_text(v, sizeof v, &out->st);
    int ok = part && (!out->view || view) && profile_set_meta(part, STATS_KEY, v) == 0
        && profile_set_meta(part, ROWS_KEY, out->rows ? out->rows : "") == 0
        && profile_set_meta(part, NOTES_KEY, out->notes ? out->notes : "") == 0
        && (!view || profile_set_meta(part, VIEW_KEY, view) == 0) && profile_write_mem(part, &buf, &len) == 0;
    free(view);
    int rc = ok ? mpi_comm_send((int)merge_tree_parent((uint32_t)r->rank), buf, len,
                                now_ns() + readers_partial_wait_ns())
                : -1;
    free(buf);
    profile_free(part);
    r->lost |= ok && rc != 0;
    return rc == 0 ? EXIT_OK
                   : cli_fail("%s --readers: reader %d: its share did not reach reader %u", r->cmd, r->rank,
                              merge_tree_parent((uint32_t)r->rank));
}

/* This reader's own share, snapshot and folded. */
static int read_share(struct readers *r, struct live **ls, uint32_t n, enum live_consistency c,
                      struct readers_round *out)
{
    struct live_snapshot *snaps = calloc(n + 1, sizeof *snaps);
    struct profile **each = out->view ? calloc(n + 1, sizeof *each) : NULL;
    struct live_set_pause sp;
    struct live_sync sync = { barrier, r };
    char err[1024];
    if (!snaps || (out->view && !each)) {
        free(snaps);
        free(each);
        return cli_fail("out of memory");
    }
    int rc = c == LIVE_JOB ? live_snapshot_set_sync(ls, n, snaps, &sp, &sync, err, sizeof err)
                           : live_snapshot_set(ls, n, c, snaps, &sp, err, sizeof err);
    if (rc != 0) {
        free(snaps);
        free(each);
        return cli_fail("%s", err);
    }
    size_t len = 0;
    FILE *f = open_memstream(&out->rows, &len);
    if (f) {
        live_set_rows(f, ls, snaps, n);
        fclose(f);
    }
    rc = f && live_set_fold(out->m, ls, snaps, n, each) == 0 ? EXIT_OK : cli_fail("out of memory");
    for (uint32_t i = 0; each && i < n; i++) {
        if (rc == EXIT_OK && top_view_add(out->view, each[i]) != 0)
            rc = cli_fail("out of memory");
        profile_free(each[i]);
    }
    free(each);
    out->st =
        (struct readers_stats){ n,
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

int readers_round(struct readers *r, struct live **ls, uint32_t n, enum live_consistency c, const char *notes,
                  struct readers_round *out)
{
    out->m = merge_new(0);
    out->rows = NULL;
    out->notes = notes ? strdup(notes) : NULL;
    out->st = (struct readers_stats){ 0 };
    int rc = out->m ? read_share(r, ls, n, c, out) : cli_fail("out of memory");
    if (rc == EXIT_OK)
        rc = take_children(r, out);
    if (rc == EXIT_OK && r->rank > 0)
        rc = send_up(r, out);
    return rc;
}

void readers_round_free(struct readers_round *out)
{
    merge_free(out->m);
    free(out->rows);
    free(out->notes);
    out->m = NULL;
    out->rows = out->notes = NULL;
}

/* The word down the tree: 'g' go on, 's' end, 'x' end, a reader lost. */
static int word_down(struct readers *r, unsigned char word, uint64_t bound_ns, int quiet)
{
    for (uint32_t step = 0; (step = merge_tree_next_child((uint32_t)r->rank, (uint32_t)r->size, step));)
        if (mpi_comm_send(r->rank + (int)step, &word, 1, now_ns() + bound_ns) != 0 && !quiet) {
            r->lost = 1;
            return cli_fail("%s --readers: reader %d: reader %u did not take the word %s within %.1f s "
                            "(it ended?): ending, every process released",
                            r->cmd, r->rank, r->rank + step, word == 'g' ? "to go on" : "to end",
                            bound_ns / 1e9);
        }
    return EXIT_OK;
}

int readers_word(struct readers *r, int *go, uint64_t wait_ns, int first)
{
    unsigned char word = *go ? 'g' : 's';
    if (r->rank > 0) {
        unsigned char *buf = NULL;
        size_t len = 0;
        int parent = (int)merge_tree_parent((uint32_t)r->rank);
        int rc = mpi_comm_recv(parent, &buf, &len, now_ns() + wait_ns, WORD_SEND_NS);
        word = rc == 0 && len == 1 ? buf[0] : 'x';
        free(buf);
        if (rc != 0) {
            r->lost = 1;
            return cli_fail(
                "%s --readers: reader %d: no word from reader %d within %.1f s (a reader ended?): "
                "ending, every process released",
                r->cmd, r->rank, parent, wait_ns / 1e9);
        }
        if (word == 'x') { /* the caller tells the readers below (readers_abort) */
            r->lost = 1;
            return cli_fail("%s --readers: reader %d: a reader was lost: ending, every process released",
                            r->cmd, r->rank);
        }
        *go = word == 'g';
    }
    /* the first word may find a reader still attaching to its share */
    return word_down(r, word, first ? wait_ns : WORD_SEND_NS, 0);
}

void readers_abort(struct readers *r)
{
    r->lost = 1;
    word_down(r, 'x', BARRIER_MAX_NS, 1);
}

/* Reader 0: the job snapshot. */
static int finish(const struct readers *r, struct readers_round *rd, enum live_consistency c, const char *out)
{
    const struct readers_stats *st = &rd->st;
    if (!st->processes)
        return cli_fail("snapshot --readers: none of the %d readers found a process of the set", r->size);
    struct profile *p = merge_finish(rd->m);
    struct live_set_pause sp = {
        .pause_ns = st->set_pause,
        .pause_sum_ns = st->pause_sum,
        .pause_max_ns = st->pause_max,
        .pause_max_pid = (pid_t)st->pause_max_pid,
        .copy_ns = st->copy,
        .threads = (uint32_t)st->threads,
    };
    int rc = p && live_set_meta(p, c, &sp, (uint32_t)st->processes, rd->rows ? rd->rows : "", UINT64_MAX) == 0
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

int live_readers_snapshot(const struct live_set_sel *sel, enum live_consistency c, const char *out)
{
    struct readers *r = readers_start("snapshot");
    if (!r)
        return EXIT_FAIL;
    struct live **ls = NULL;
    uint32_t n = 0;
    int rc = readers_open_share(r, sel, &ls, &n);
    if (rc == EXIT_OK) {
        struct readers_round rd = { 0 };
        rc = readers_round(r, ls, n, c, NULL, &rd);
        if (rc == EXIT_OK && r->rank == 0)
            rc = finish(r, &rd, c, out);
        readers_round_free(&rd);
        live_set_close(ls, n);
    }
    readers_end(r);
    return rc;
}
