/* Several processes for the live commands (live_set.h). */
#include "tools/live_set.h"
#include "tools/cli.h"
#include "tools/live_cli.h"
#include "profile/merge.h"
#include "profile/procinfo.h"
#include <hookit/a2n.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int live_set_option(struct live_set_sel *sel, int opt, const char *arg, const char *cmd)
{
    enum live_set_kind kind = opt == 'P' ? SET_PIDS
        : opt == 'F'                     ? SET_FAMILY
        : opt == 'J'                     ? SET_JOB
        : opt == 'A'                     ? SET_ALL
                                         : SET_NONE;
    if (kind == SET_NONE)
        return 0;
    if (sel->kind != SET_NONE) {
        cli_usage_error(cmd, "one of --pids, --family, --job and --all only");
        return -1;
    }
    if (kind == SET_JOB && !*arg) {
        cli_usage_error(cmd, "--job needs the job's id");
        return -1;
    }
    sel->kind = kind;
    sel->arg = arg;
    return 1;
}

struct pids {
    pid_t *v;
    uint32_t n, cap;
};

static int pids_add(struct pids *p, pid_t pid)
{
    for (uint32_t i = 0; i < p->n; i++)
        if (p->v[i] == pid)
            return 0;
    if (p->n == p->cap) {
        uint32_t cap = p->cap ? p->cap * 2 : 16;
        pid_t *v = realloc(p->v, cap * sizeof *v);
        if (!v)
            return -1;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = pid;
    return 0;
}

/* "P1,P2,...": EXIT_OK or EXIT_USAGE (printed). */
static int parse_pids(const char *text, const char *cmd, struct pids *out)
{
    char *copy = strdup(text), *save = NULL;
    int rc = copy ? EXIT_OK : cli_fail("out of memory");
    for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && rc == EXIT_OK;
         tok = strtok_r(NULL, ",", &save)) {
        pid_t pid = live_cli_pid(cmd, tok);
        rc = pid < 0 ? EXIT_USAGE : pids_add(out, pid) == 0 ? EXIT_OK : cli_fail("out of memory");
    }
    free(copy);
    if (rc == EXIT_OK && out->n == 0)
        rc = cli_usage_error(cmd, "--pids needs at least one process id");
    return rc;
}

/* root and every process below it, from one pass over /proc (a process
 * born meanwhile may be missed: the family as it was then). */
static int family_of(pid_t root, struct pids *out)
{
    pid_t *pid = NULL, *ppid = NULL;
    uint32_t n = 0, cap = 0;
    int rc = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && rc == 0 && (e = readdir(d))) {
        char *end;
        long v = strtol(e->d_name, &end, 10);
        if (v <= 0 || *end)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            pid_t *a = realloc(pid, cap * sizeof *a), *b = a ? realloc(ppid, cap * sizeof *b) : NULL;
            pid = a ? a : pid;
            ppid = b ? b : ppid;
            if (!a || !b) {
                rc = -1;
                break;
            }
        }
        pid[n] = (pid_t)v;
        ppid[n++] = procinfo_parent((pid_t)v, NULL, 0);
    }
    if (d)
        closedir(d);
    if (rc == 0)
        rc = pids_add(out, root);
    /* breadth first: the children of each member in turn */
    for (uint32_t done = 0; rc == 0 && done < out->n; done++)
        for (uint32_t i = 0; i < n && rc == 0; i++)
            if (ppid[i] == out->v[done] && pid[i] != out->v[done])
                rc = pids_add(out, pid[i]);
    free(pid);
    free(ppid);
    return rc;
}

struct attached {
    struct live **v;
    uint32_t n;
};

static int keep(struct attached *a, struct live *l)
{
    struct live **v = realloc(a->v, ((size_t)a->n + 2) * sizeof *v);
    if (!v)
        return -1;
    a->v = v;
    a->v[a->n++] = l;
    return 0;
}

/* The jobs seen in the registry, for the message when --job found none. */
static void say_jobs(struct live **seen, uint32_t n, const char *id)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    uint32_t jobs = 0;
    for (uint32_t i = 0; f && i < n; i++) {
        struct live_job j, k;
        if (!live_job_of(seen[i], &j))
            continue;
        int first = 1;
        uint32_t ranks = 0;
        for (uint32_t m = 0; m < n; m++)
            if (live_job_of(seen[m], &k) && !strcmp(k.id, j.id)) {
                first &= m >= i;
                ranks++;
            }
        if (first)
            fprintf(f, "%s%s (%u rank%s here, of %d)", jobs++ ? ", " : "", j.id, ranks, ranks == 1 ? "" : "s",
                    (int)j.size);
    }
    if (f)
        fclose(f);
    if (jobs)
        cli_fail("no process of job %s in your registry; the jobs there: %s", id, text);
    else
        cli_fail("no process of job %s in your registry, and no MPI rank at all (a rank is marked "
                 "at MPI_Init)",
                 id);
    free(text);
}

static int open_registered(const struct live_set_sel *sel, int flags, struct attached *a)
{
    pid_t *pids = NULL;
    char err[1024];
    int n = live_list(geteuid(), &pids, err, sizeof err);
    if (n < 0)
        return cli_fail("%s", err);
    struct attached seen = { 0 };
    int rc = EXIT_OK;
    for (int i = 0; i < n && rc == EXIT_OK; i++) {
        if (pids[i] == getpid())
            continue;
        struct live *l = live_attach(pids[i], 0, err, sizeof err);
        if (!l)
            continue; /* ended, or left over: not running */
        struct live_job j;
        int take = sel->kind == SET_ALL || (live_job_of(l, &j) && !strcmp(j.id, sel->arg));
        if ((take ? keep(a, l) : keep(&seen, l)) != 0) {
            live_detach(l);
            rc = cli_fail("out of memory");
        }
    }
    if (rc == EXIT_OK && a->n == 0 && !(flags & LIVE_SET_MAY_BE_EMPTY)) {
        if (sel->kind == SET_JOB)
            say_jobs(seen.v, seen.n, sel->arg);
        else
            cli_fail("no profiled process of yours is running");
        rc = EXIT_FAIL;
    }
    live_set_close(seen.v, seen.n);
    free(pids);
    return rc;
}

/* A job's ranks in rank order, then processes without a rank by pid. */
static int by_rank(const void *x, const void *y)
{
    struct live *const *a = x, *const *b = y;
    struct live_job ja, jb;
    int64_t ka = live_job_of(*a, &ja) ? ja.rank : (int64_t)1 << 40 | live_pid(*a);
    int64_t kb = live_job_of(*b, &jb) ? jb.rank : (int64_t)1 << 40 | live_pid(*b);
    return (ka > kb) - (ka < kb);
}

int live_set_open(const struct live_set_sel *sel, const char *cmd, int flags, struct live ***ls, uint32_t *n)
{
    struct attached a = { 0 };
    struct pids pids = { 0 };
    int rc = EXIT_OK;
    *ls = NULL;
    *n = 0;
    if (sel->kind == SET_JOB || sel->kind == SET_ALL) {
        rc = open_registered(sel, flags, &a);
    } else if (sel->kind == SET_PIDS) {
        rc = parse_pids(sel->arg, cmd, &pids);
        for (uint32_t i = 0; i < pids.n && rc == EXIT_OK; i++) {
            struct live *l = live_cli_attach(pids.v[i], 0);
            rc = !l ? EXIT_FAIL : keep(&a, l) == 0 ? EXIT_OK : cli_fail("out of memory");
        }
    } else {
        pid_t root = live_cli_pid(cmd, sel->arg);
        if (root < 0)
            return EXIT_USAGE;
        /* the family as it is: its profiled members (the head may be a
         * launcher that is not, like make or a shell) */
        if (family_of(root, &pids) != 0)
            rc = cli_fail("out of memory");
        for (uint32_t i = 0; i < pids.n && rc == EXIT_OK; i++) {
            char err[1024];
            struct live *l = live_attach(pids.v[i], 0, err, sizeof err);
            if (!l && i == 0 && strstr(err, "refused"))
                rc = cli_fail("%s", err);
            if (l && keep(&a, l) != 0) {
                live_detach(l);
                rc = cli_fail("out of memory");
            }
        }
        if (rc == EXIT_OK && a.n == 0)
            rc =
                cli_fail("no process of the family of %d (%u processes) is profiled live", (int)root, pids.n);
    }
    free(pids.v);
    if (rc != EXIT_OK) {
        live_set_close(a.v, a.n);
        return rc;
    }
    qsort(a.v, a.n, sizeof *a.v, by_rank);
    *ls = a.v;
    *n = a.n;
    return EXIT_OK;
}

void live_set_close(struct live **ls, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        live_detach(ls[i]);
    free(ls);
}

void live_set_name(const struct live_set_sel *sel, char *out, size_t size)
{
    if (sel->kind == SET_JOB)
        snprintf(out, size, "job.%.100s", sel->arg);
    else if (sel->kind == SET_FAMILY)
        snprintf(out, size, "family.%.20s", sel->arg);
    else if (sel->kind == SET_PIDS)
        snprintf(out, size, "pids.%.*s", (int)strcspn(sel->arg, ","), sel->arg);
    else
        snprintf(out, size, "all");
    for (char *c = out; *c; c++)
        if (*c == '/')
            *c = '_';
}

/* The merged profile has its first input's metadata: its own pause is
 * not the set's (each process's is in live_pauses). */
static void drop_first_inputs_pause(struct profile *p)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->process.nmeta; i++)
        if (strncmp(p->process.meta[i].key, "live_", 5))
            p->process.meta[k++] = p->process.meta[i];
    p->process.nmeta = k;
}

void live_set_rows(FILE *f, struct live **ls, const struct live_snapshot *snaps, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        struct live_job j;
        fprintf(f, "\n%d\t%d\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%u", (int)live_pid(ls[i]),
                live_job_of(ls[i], &j) ? (int)j.rank : -1, snaps[i].pause_ns, snaps[i].gather_ns,
                snaps[i].copy_ns, snaps[i].nthreads);
    }
}

int live_set_meta(struct profile *p, enum live_consistency c, const struct live_set_pause *sp, uint32_t n,
                  const char *rows, uint64_t runnable_ns)
{
    static const char *const level[] = { "thread", "process", "job" };
    drop_first_inputs_pause(p);
    int rc = profile_set_meta(p, "live_consistency", level[c]);
    rc |= procinfo_set_meta_u64(p, "live_set_processes", n);
    rc |= procinfo_set_meta_u64(p, "live_set_threads", sp->threads);
    rc |= procinfo_set_meta_u64(p, "live_set_wall_ns", sp->wall_ns);
    if (c != LIVE_THREAD) {
        rc |= procinfo_set_meta_u64(p, "live_set_pause_ns", sp->pause_ns);
        rc |= procinfo_set_meta_u64(p, "live_set_pause_sum_ns", sp->pause_sum_ns);
        rc |= procinfo_set_meta_u64(p, "live_set_pause_max_ns", sp->pause_max_ns);
        rc |= procinfo_set_meta_u64(p, "live_set_pause_max_pid", (uint64_t)sp->pause_max_pid);
        rc |= procinfo_set_meta_u64(p, "live_set_copy_ns", sp->copy_ns);
    }
    if (runnable_ns != UINT64_MAX && c == LIVE_JOB)
        rc |= procinfo_set_meta_u64(p, "live_set_pause_runnable_ns", runnable_ns);
    char *text = NULL;
    if (asprintf(&text, "pid\trank\tpause_ns\tgather_ns\tcopy_ns\tthreads%s", rows) < 0)
        return -1;
    rc |= profile_set_meta(p, "live_pauses", text);
    free(text);
    return rc ? -1 : 0;
}

int live_set_fold(struct merge *m, struct live **ls, const struct live_snapshot *snaps, uint32_t n,
                  struct profile **each)
{
    /* Names after the pause: resolving costs the reader, not the program. */
    for (uint32_t i = 0; i < n; i++) {
        struct a2n *a2n = a2n_open(live_pid(ls[i]));
        struct profile *p = live_cli_named(ls[i], &snaps[i], "snapshot", a2n);
        a2n_close(a2n);
        char label[64];
        snprintf(label, sizeof label, "pid %d", (int)live_pid(ls[i]));
        int ok = p && merge_add(m, p, label) == 0;
        if (each)
            each[i] = p;
        else
            profile_free(p);
        if (!ok)
            return -1;
    }
    return 0;
}

struct profile *live_set_profile(struct live **ls, uint32_t n, enum live_consistency c,
                                 struct live_set_pause *sp, struct profile ***keep)
{
    char err[1024];
    struct live_snapshot *snaps = calloc(n + 1, sizeof *snaps);
    if (!snaps) {
        cli_fail("out of memory");
        return NULL;
    }
    if (live_snapshot_set(ls, n, c, snaps, sp, err, sizeof err) != 0) {
        cli_fail("%s", err);
        free(snaps);
        return NULL;
    }
    struct merge *m = merge_new(0);
    struct profile **each = keep ? calloc(n + 1, sizeof *each) : NULL;
    int ok = m && (!keep || each) && live_set_fold(m, ls, snaps, n, each) == 0;
    struct profile *merged = ok ? merge_finish(m) : NULL;
    char *rows = NULL;
    size_t len = 0;
    FILE *f = merged ? open_memstream(&rows, &len) : NULL;
    if (f) {
        live_set_rows(f, ls, snaps, n);
        fclose(f);
    }
    if (merged && (!f || live_set_meta(merged, c, sp, n, rows, n ? snaps[0].runnable_ns : UINT64_MAX) != 0)) {
        profile_free(merged);
        merged = NULL;
    }
    free(rows);
    if (!merged)
        cli_fail("out of memory merging the snapshots");
    merge_free(m);
    for (uint32_t i = 0; i < n; i++)
        live_snapshot_free(&snaps[i]);
    free(snaps);
    if (keep && merged) {
        *keep = each;
    } else {
        for (uint32_t i = 0; each && i < n; i++)
            profile_free(each[i]);
        free(each);
    }
    return merged;
}
