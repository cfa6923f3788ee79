/*
 * One profile per MPI job, reduced inside the job at MPI_Finalize
 * (docs/mpi.md, "One profile per job").
 *
 * At MPI_Init (HOOKIT_EV_MPI_INITIALIZED) hookit duplicates MPI_COMM_WORLD
 * (profile/mpi_comm.c).  At MPI_Finalize (HOOKIT_EV_MPI_FINALIZING), before the
 * real one, every rank takes its profile (all threads, each a consistent
 * copy), folds it into a merge (profile/merge.h), takes in its children's
 * partials along the binomial tree, and sends its own partial to its
 * parent; rank 0 finishes the merge and writes the job profile,
 * hookit.<exe>.job.<jobid>.prof, the same profile `hookit merge` makes of
 * the per-rank files.  After the real MPI_Finalize (FINALIZED) rank 0 adds
 * the time MPI_Finalize took it, from entry to return.
 *
 * Every wait is bounded (HOOKIT_MPI_TIMEOUT = T seconds): a rank waits for
 * the child whose subtree spans 2^k ranks until T x (k + 1) after its own
 * MPI_Finalize began, and gives its parent until T x (k + 2), k its own
 * level.  A child that did not come is listed as missing (with its whole
 * subtree); a rank whose parent did not take its partial writes it as a
 * file of its own (the merge of its subtree) and says so in one line.
 *
 * HOOKIT_MPI_OUTPUT: job (default: the job profile only), ranks (no
 * reduction: every rank writes its own profile at exit, as before), both
 * (the job profile, and each rank's own profile as it went into the job).
 */
#include "profiler/jprof/jprof.h"
#include "output.h"
#include "mpi_job.h"
#include "profile/mpi_comm.h"
#include "profile/merge.h"
#include "profile/procinfo.h"
#include "profile/profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OUT_JOB = 1, OUT_RANKS, OUT_BOTH };

static struct {
    int mode;    /* OUT_*, 0 before MPI_Init */
    int comm_ok; /* hookit's communicator is there */
    char comm_err[200];
    int rank, size;
    uint64_t timeout_ns;
    int finalizing;      /* MPI_Finalize began */
    int in_job;          /* this rank's profile is in the job's (or a partial's file) */
    uint64_t entry_ns;   /* MPI_Finalize's entry */
    struct profile *job; /* rank 0: the job profile, written */
    char job_dir[4096], job_name[600];
} job;

#define DEFAULT_TIMEOUT_S 30

JP_NOINSTR static int parse_mode(void)
{
    const char *v = getenv("HOOKIT_MPI_OUTPUT");
    if (!v || !*v || !strcmp(v, "job"))
        return OUT_JOB;
    if (!strcmp(v, "ranks"))
        return OUT_RANKS;
    if (!strcmp(v, "both"))
        return OUT_BOTH;
    jp_host->log("HOOKIT_MPI_OUTPUT=%s: not job, ranks or both; using job", v);
    return OUT_JOB;
}

JP_NOINSTR static uint64_t parse_timeout(void)
{
    const char *v = getenv("HOOKIT_MPI_TIMEOUT");
    if (!v || !*v)
        return DEFAULT_TIMEOUT_S * 1000000000ull;
    char *end;
    errno = 0;
    double s = strtod(v, &end);
    if (*end || errno || !(s > 0) || s > 86400) {
        jp_host->log("HOOKIT_MPI_TIMEOUT=%s: not a number of seconds from 0 to 86400; using %d", v,
                     DEFAULT_TIMEOUT_S);
        return DEFAULT_TIMEOUT_S * 1000000000ull;
    }
    return (uint64_t)(s * 1e9);
}

JP_NOINSTR void jp_mpi_job_initialized(void)
{
    if (job.mode)
        return; /* MPI_Init once per process */
    job.mode = parse_mode();
    job.timeout_ns = parse_timeout();
    if (job.mode == OUT_RANKS)
        return;
    job.comm_ok = mpi_comm_init(&job.rank, &job.size, job.comm_err, sizeof job.comm_err) == 0;
}

JP_NOINSTR void jp_mpi_job_fork_child(void)
{
    profile_free(job.job);
    memset(&job, 0, sizeof job);
}

/* floor(log2(x)) for x > 0. */
JP_NOINSTR static unsigned level_of(uint32_t x)
{
    return 31u - (unsigned)__builtin_clz(x);
}

/* Ranks missing from the job, as "a-b" ranges, in order. */
struct missing {
    char *text;
    size_t len;
    FILE *f;
    uint32_t count;
};

JP_NOINSTR static void add_missing(struct missing *m, uint32_t first, uint32_t n)
{
    if (!m->f || !n)
        return;
    fprintf(m->f, "%s%u", m->count ? "," : "", first);
    if (n > 1)
        fprintf(m->f, "-%u", first + n - 1);
    m->count += n;
}

/* A child's list ("a-b,c,...", its count after a space). */
JP_NOINSTR static void add_missing_text(struct missing *m, const char *v)
{
    unsigned count = 0;
    const char *sp = v ? strchr(v, ' ') : NULL;
    if (!sp || sscanf(sp + 1, "%u", &count) != 1 || !count || !m->f)
        return;
    fprintf(m->f, "%s%.*s", m->count ? "," : "", (int)(sp - v), v);
    m->count += count;
}

JP_NOINSTR static const char *missing_text(struct missing *m)
{
    if (m->f) {
        fflush(m->f);
        return m->text ? m->text : "";
    }
    return "";
}

/* The slowest reduction below, and when the last profile below was built
 * (CLOCK_MONOTONIC: comparable between the ranks of one node only):
 * "NS RANK BUILT". */
struct slowest {
    uint64_t ns;
    int rank;
    uint64_t last_built;
};

JP_NOINSTR static void note_slowest(struct slowest *s, const char *v)
{
    unsigned long long ns, built;
    int rank;
    if (!v || sscanf(v, "%llu %d %llu", &ns, &rank, &built) != 3)
        return;
    if (ns > s->ns) {
        s->ns = ns;
        s->rank = rank;
    }
    if (built > s->last_built)
        s->last_built = built;
}

#define MISSING_KEY "hookit.job.missing"
#define SLOWEST_KEY "hookit.job.slowest"

/* The job's name for its files: the batch system's or launcher's job id,
 * else rank 0's pid. */
JP_NOINSTR static void job_id(char *out, size_t size)
{
    const char *slurm = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
    const char *ompi = getenv("OMPI_MCA_ess_base_jobid");
    if (slurm && *slurm)
        snprintf(out, size, "%s%s%s", slurm, step && *step ? "." : "", step ? step : "");
    else if (ompi && *ompi)
        snprintf(out, size, "%s", ompi);
    else
        snprintf(out, size, "%d", (int)getpid());
    for (char *c = out; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '.'
              || *c == '-' || *c == '_'))
            *c = '_';
}

/* Write p as hookit.<exe>.<what>.prof (a counter added when the name is
 * taken), in the output directory or the fallback one; the place in
 * job.job_dir/job_name.  0 or -1 (said). */
JP_NOINSTR static int write_job_file(const struct profile *p, const char *what)
{
    char exe[256], err[512] = "";
    procinfo_exe_name(exe, sizeof exe);
    const char *dirs[2] = { jp_host->output_dir,
                            HOOKIT_HOST_HAS(jp_host, fallback_dir) ? jp_host->fallback_dir : NULL };
    for (int d = 0; d < 2; d++) {
        if (!dirs[d] || !*dirs[d] || (d == 1 && !strcmp(dirs[0], dirs[1])))
            continue;
        for (int attempt = 0; attempt < 100; attempt++) {
            if (attempt)
                snprintf(job.job_name, sizeof job.job_name, "hookit.%s.%s.%d.prof", exe, what, attempt);
            else
                snprintf(job.job_name, sizeof job.job_name, "hookit.%s.%s.prof", exe, what);
            if (profile_write_file(p, dirs[d], job.job_name, err, sizeof err) == 0) {
                snprintf(job.job_dir, sizeof job.job_dir, "%s", dirs[d]);
                return 0;
            }
            if (errno != EEXIST)
                break;
        }
    }
    jp_host->log("jprof: cannot write the job profile: %s", err);
    job.job_name[0] = 0;
    return -1;
}

/* This rank's own profile, as it stands at MPI_Finalize's entry. */
JP_NOINSTR static struct profile *own_profile(void)
{
    struct profile *p = jp_build_profile(0);
    if (p && profile_set_meta(p, "end", "MPI_Finalize") != 0) {
        profile_free(p);
        return NULL;
    }
    if (p && job.mode == OUT_BOTH)
        jp_write_built(p);
    return p;
}

/* Rank 0's account of its reduction, per child (docs/mpi.md): how long it
 * waited for the partial, how long reading and folding it took, its bytes. */
struct levels {
    char text[1024];
    size_t len;
    uint64_t built_ns; /* own profile built and folded (since entry) */
};

JP_NOINSTR static void note_level(struct levels *lv, uint32_t step, uint64_t wait_ns, uint64_t fold_ns,
                                  size_t bytes)
{
    if (lv->len < sizeof lv->text)
        lv->len += (size_t)snprintf(lv->text + lv->len, sizeof lv->text - lv->len,
                                    "%s%u:%" PRIu64 ":%" PRIu64 ":%zu", lv->len ? "," : "", step, wait_ns,
                                    fold_ns, bytes);
}

/* Child `step` of this rank: its partial taken in, or its subtree missing. */
JP_NOINSTR static int take_child(struct merge *m, uint32_t step, struct missing *miss, struct slowest *slow,
                                 struct levels *lv)
{
    uint32_t child = (uint32_t)job.rank + step;
    uint32_t span = merge_tree_span((uint32_t)job.rank, (uint32_t)job.size, step);
    uint64_t deadline = job.entry_ns + job.timeout_ns * (level_of(step) + 1);
    unsigned char *buf = NULL;
    size_t len = 0;
    uint64_t t0 = mpi_comm_now();
    int rc = mpi_comm_recv((int)child, &buf, &len, deadline, job.timeout_ns);
    uint64_t t1 = mpi_comm_now();
    struct profile *part = NULL;
    char err[256];
    if (rc == 0)
        part = profile_read_mem(buf, len, "partial", err, sizeof err);
    free(buf);
    int took = part && agg_partial_inputs(part) > 0 && merge_add_partial(m, part) == 0;
    if (took) {
        add_missing_text(miss, profile_get_meta(part, MISSING_KEY));
        note_slowest(slow, profile_get_meta(part, SLOWEST_KEY));
        note_level(lv, step, t1 - t0, mpi_comm_now() - t1, len);
    } else {
        jp_host->debug_log("jprof: ranks %u-%u: no partial (%s)", child, child + span - 1,
                           rc > 0       ? "none within the bound"
                               : rc < 0 ? "MPI error"
                                        : "unreadable");
        add_missing(miss, child, span);
    }
    profile_free(part);
    return took;
}

/* A partial that could not go to the parent: the merge of this subtree,
 * as a profile of its own. */
JP_NOINSTR static void write_subtree(const struct profile *part, const char *why)
{
    struct merge *m = merge_new(0);
    struct profile *p = m && merge_add_partial(m, part) == 0 ? merge_finish(m) : NULL;
    char id[128], what[200];
    job_id(id, sizeof id);
    uint32_t last = (uint32_t)job.rank + agg_partial_inputs(part) - 1;
    snprintf(what, sizeof what, "job.%s.r%d-%u.%d", id, job.rank, last, (int)getpid());
    if (p && write_job_file(p, what) == 0)
        jp_host->log("jprof: rank %d: %s: ranks %d-%u written to %s/%s instead of the job profile", job.rank,
                     why, job.rank, last, job.job_dir, job.job_name);
    else
        jp_host->log("jprof: rank %d: %s, and its ranks' profile cannot be written", job.rank, why);
    profile_free(p);
    merge_free(m);
}

/* This subtree's partial to the parent.  The merge is freed as soon as the
 * partial is made: a rank holds at most the partial and its bytes. */
JP_NOINSTR static int send_up(struct merge *m, struct missing *miss, struct slowest *slow)
{
    uint32_t span = (uint32_t)(job.rank & -job.rank);
    uint64_t deadline = job.entry_ns + job.timeout_ns * (level_of(span) + 2);
    struct profile *part = merge_partial(m);
    merge_free(m);
    char v[64];
    uint64_t mine = mpi_comm_now() - job.entry_ns;
    if (mine > slow->ns) {
        slow->ns = mine;
        slow->rank = job.rank;
    }
    snprintf(v, sizeof v, "%" PRIu64 " %d %" PRIu64, slow->ns, slow->rank, slow->last_built);
    char *mt = NULL;
    if (part && miss->count && asprintf(&mt, "%s %u", missing_text(miss), miss->count) < 0)
        mt = NULL;
    unsigned char *buf = NULL;
    size_t len = 0;
    int ok = part && profile_set_meta(part, SLOWEST_KEY, v) == 0
        && (!miss->count || (mt && profile_set_meta(part, MISSING_KEY, mt) == 0))
        && profile_write_mem(part, &buf, &len) == 0;
    free(mt);
    int rc = ok ? mpi_comm_send_patient((int)merge_tree_parent((uint32_t)job.rank), buf, len, deadline) : -1;
    free(buf);
    if (rc != 0 && part)
        write_subtree(part,
                      rc > 0   ? "the parent rank did not take the profile in time"
                          : ok ? "MPI error sending to the parent rank"
                               : "out of memory");
    else if (rc != 0 && (job.in_job = 0) == 0) /* its own profile is written at exit */
        jp_host->log("jprof: rank %d: out of memory making its partial profile: it writes its own "
                     "at exit; the ranks below it are missing from the job profile",
                     job.rank);
    profile_free(part);
    return rc;
}

JP_NOINSTR static void finish_job(struct merge *m, struct missing *miss, struct slowest *slow,
                                  const struct levels *lv)
{
    struct profile *p = merge_finish(m);
    uint64_t mine = mpi_comm_now() - job.entry_ns;
    if (mine > slow->ns) {
        slow->ns = mine;
        slow->rank = 0;
    }
    char v[64], id[128], what[160];
    int rc = p ? 0 : -1;
    snprintf(v, sizeof v, "%d", job.size);
    rc |= p ? profile_set_meta(p, "job_ranks", v) : 0;
    snprintf(v, sizeof v, "%u", miss->count);
    rc |= p ? profile_set_meta(p, "job_missing", v) : 0;
    if (p && miss->count)
        rc |= profile_set_meta(p, "job_missing_ranks", missing_text(miss));
    snprintf(v, sizeof v, "%" PRIu64, mine);
    rc |= p ? profile_set_meta(p, "job_reduce_ns", v) : 0;
    snprintf(v, sizeof v, "%" PRIu64, slow->ns);
    rc |= p ? profile_set_meta(p, "job_reduce_max_ns", v) : 0;
    snprintf(v, sizeof v, "%d", slow->rank);
    rc |= p ? profile_set_meta(p, "job_reduce_max_rank", v) : 0;
    snprintf(v, sizeof v, "%.3f", (double)job.timeout_ns / 1e9);
    rc |= p ? profile_set_meta(p, "job_timeout_s", v) : 0;
    snprintf(v, sizeof v, "%" PRIu64, lv->built_ns);
    rc |= p ? profile_set_meta(p, "job_own_profile_ns", v) : 0;
    /* From the last rank's profile built to the job's: the tree alone (one node) */
    uint64_t end = mpi_comm_now();
    snprintf(v, sizeof v, "%" PRIu64, end > slow->last_built ? end - slow->last_built : 0);
    rc |= p ? profile_set_meta(p, "job_tree_ns", v) : 0;
    if (p && lv->len)
        rc |= profile_set_meta(p, "job_children", lv->text);
    if (rc != 0) {
        profile_free(p);
        jp_host->log("jprof: out of memory making the job profile; ranks write their own");
        return;
    }
    job_id(id, sizeof id);
    snprintf(what, sizeof what, "job.%s", id);
    if (write_job_file(p, what) != 0) {
        profile_free(p);
        return;
    }
    if (miss->count)
        jp_host->log("jprof: job profile %s/%s: %u of %d ranks missing (%s): none came within "
                     "the bound (HOOKIT_MPI_TIMEOUT)",
                     job.job_dir, job.job_name, miss->count, job.size, missing_text(miss));
    else
        jp_host->debug_log("jprof: wrote the job profile %s/%s (%d ranks) in %.3f ms", job.job_dir,
                           job.job_name, job.size, (double)mine / 1e6);
    job.job = p; /* MPI_Finalize's own time comes after the real one */
}

/* The job profile is made: the word goes down the tree, and only then does
 * a rank go on to the real MPI_Finalize.  A rank that gave its partial
 * waits for it (sleeping) instead of running the library's own shut-down,
 * which on a node with more ranks than cores would take the cores from
 * the ranks still reducing.  Bounded: T x (depth + 2) after this rank's
 * MPI_Finalize began, and 1 s for a child to take the word. */
JP_NOINSTR static void go_on(uint32_t children)
{
    if (job.rank > 0) {
        uint32_t depth = job.size > 1 ? level_of((uint32_t)job.size - 1) + 1 : 0;
        uint64_t deadline = job.entry_ns + job.timeout_ns * (depth + 2);
        if (mpi_comm_wait_go((int)merge_tree_parent((uint32_t)job.rank), deadline) != 0)
            jp_host->debug_log("jprof: rank %d: no word from its parent: goes on", job.rank);
    }
    for (uint32_t step = 1; step && step <= children; step <<= 1)
        if ((children & step) && mpi_comm_go(job.rank + (int)step, mpi_comm_now() + 1000000000ull) != 0)
            jp_host->debug_log("jprof: rank %d: rank %d did not take the word", job.rank,
                               job.rank + (int)step);
}

JP_NOINSTR void jp_mpi_job_finalizing(void)
{
    if (job.mode == OUT_RANKS || job.finalizing)
        return;
    job.finalizing = 1;
    job.entry_ns = mpi_comm_now();
    int rank_known = job.comm_ok ? job.rank : jp_rank;
    if (!job.mode || !job.comm_ok) {
        if (rank_known <= 0)
            jp_host->log("jprof: no job profile (%s): every rank writes its own",
                         job.mode ? job.comm_err : "MPI_Init was not seen");
        return;
    }
    if (jp_size > 0 && jp_size != job.size) {
        if (job.rank == 0)
            jp_host->log("jprof: no job profile: MPI_COMM_WORLD has %d ranks, the launcher's job "
                         "%d: every rank writes its own",
                         job.size, jp_size);
        return;
    }
    struct profile *own = own_profile();
    struct merge *m = merge_new(0);
    /* "-": no file of its own (the ranks table's file column, input.N) */
    if (!own || !m || merge_add(m, own, "-") != 0) {
        jp_host->log("jprof: rank %d: out of memory for the job profile; it writes its own", job.rank);
        profile_free(own);
        merge_free(m);
        return;
    }
    profile_free(own);
    job.in_job = 1;
    struct missing miss = { 0 };
    miss.f = open_memstream(&miss.text, &miss.len);
    struct slowest slow = { 0, job.rank, 0 };
    struct levels lv = { .built_ns = mpi_comm_now() - job.entry_ns };
    slow.last_built = job.entry_ns + lv.built_ns;
    uint32_t took = 0; /* bit k: the child of step 2^k gave its partial */
    for (uint32_t step = 0; (step = merge_tree_next_child((uint32_t)job.rank, (uint32_t)job.size, step));)
        if (take_child(m, step, &miss, &slow, &lv))
            took |= step;
    int go = 1;
    if (job.rank == 0) {
        finish_job(m, &miss, &slow, &lv);
        merge_free(m);
    } else {
        go = send_up(m, &miss, &slow) == 0; /* frees m */
    }
    if (go)
        go_on(took);
    if (miss.f)
        fclose(miss.f);
    free(miss.text);
}

JP_NOINSTR void jp_mpi_job_finalized(void)
{
    if (!job.job)
        return;
    char v[32], err[512];
    snprintf(v, sizeof v, "%" PRIu64, mpi_comm_now() - job.entry_ns);
    if (profile_set_meta(job.job, "job_mpi_finalize_ns", v) == 0
        && profile_replace_file(job.job, job.job_dir, job.job_name, err, sizeof err) != 0)
        jp_host->log("jprof: cannot complete the job profile %s/%s: %s", job.job_dir, job.job_name, err);
    profile_free(job.job);
    job.job = NULL;
}

JP_NOINSTR int jp_mpi_job_skip_write(int how)
{
    if (how != HOOKIT_END_EXIT && how != JP_END_EXITING)
        return 0;
    if (job.in_job)
        return 1;
    static int said;
    if (job.mode && job.mode != OUT_RANKS && !job.finalizing && job.comm_ok && !said++)
        jp_host->log("jprof: rank %d ended without MPI_Finalize: no job profile, it writes its own",
                     job.rank);
    return 0;
}
