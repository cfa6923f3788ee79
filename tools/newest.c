/*
 * The newest profile in a directory, as gprof reads gmon.out: `hookit
 * report` with no file.  A fork family (a program that forks or runs
 * children, each writing its own profile) is found through the parent pids
 * the profiles carry, so the report shows the whole run.
 */
#include "tools/newest.h"
#include "tools/cli.h"
#include "profile/read_file.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* At most this many of the newest files are read to find a family. */
#define MAX_CANDIDATES 256

struct cand {
    char *path;
    struct timespec mtime;
    struct profile *p;
    int in;
};

static int newer_first(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec > y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec > y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->path, y->path);
}

static int is_profile_name(const char *name)
{
    size_t len = strlen(name);
    return strncmp(name, "hookit.", 7) == 0 &&
           ((len > 12 && strcmp(name + len - 5, ".prof") == 0) ||
            (len > 13 && strcmp(name + len - 6, ".trace") == 0));
}

int profile_ran_code(const struct profile *p)
{
    for (uint32_t t = 0; t < p->nthreads; t++)
        for (uint32_t i = 0; i < p->threads[t].nnodes; i++)
            if (p->threads[t].nodes[i].calls)
                return 1;
    return 0;
}

/* b was started by a (or is a after exec) while a ran. */
static int child_of(const struct profile *b, const struct profile *a)
{
    const struct prof_process *pa = &a->process, *pb = &b->process;
    if (pb->pid != pa->pid && pb->ppid != pa->pid)
        return 0;
    uint64_t end = pa->start_ns + pa->duration_ns;
    return pb->start_ns + 1000000000ull >= pa->start_ns && pb->start_ns <= end + 1000000000ull;
}

/* Candidate i is a profile `hookit ctl flush` wrote of a process that
 * wrote a newer one later (c is newest first): the newer one holds all of
 * it, so it is no member of the family (it is the same process, not a
 * parent or a child). */
static int superseded_flush(const struct cand *c, size_t i)
{
    const char *end = profile_get_meta(c[i].p, "end");
    if (!end || strcmp(end, "flush") != 0)
        return 0;
    for (size_t j = 0; j < i; j++)
        if (c[j].p && c[j].p->process.pid == c[i].p->process.pid
            && c[j].p->process.start_ns == c[i].p->process.start_ns)
            return 1;
    return 0;
}

void newest_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

int newest_profiles(const char *dir, char ***paths_out, size_t *n_out)
{
    int here = !strcmp(dir, ".");
    char where[PATH_MAX + 32];
    snprintf(where, sizeof where, here ? "the current directory" : "%s", dir);
    DIR *d = opendir(dir);
    if (!d)
        return cli_fail("report: %s %s: %s",
                        here ? "no profile given, and cannot read" : "cannot read the directory", where,
                        strerror(errno)),
               -1;
    struct cand *c = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, here ? "%.0s%s" : "%s/%s", dir, e->d_name);
        if (!is_profile_name(e->d_name) || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            struct cand *nc = realloc(c, cap * sizeof *c);
            if (!nc)
                break;
            c = nc;
        }
        c[n].path = strdup(path);
        if (!c[n].path)
            break;
        c[n].mtime = st.st_mtim;
        c[n].p = NULL;
        c[n].in = 0;
        n++;
    }
    closedir(d);
    if (n == 0) {
        free(c);
        return cli_fail("report: %sno hookit.*.prof in %s", here ? "no profile given, and " : "", where), -1;
    }
    qsort(c, n, sizeof *c, newer_first);
    size_t ncand = n < MAX_CANDIDATES ? n : MAX_CANDIDATES;
    char err[1024];
    c[0].p = profile_or_trace_read_file(c[0].path, err, sizeof err);
    int rc = 0;
    if (!c[0].p) {
        cli_fail("%s", err);
        rc = -1;
        goto out;
    }
    c[0].in = 1;
    for (size_t i = 1; i < ncand; i++)
        c[i].p = profile_or_trace_read_file(c[i].path, err, sizeof err);   /* unreadable: left out */
    /* Grow the family to its parents and children until nothing joins. */
    size_t members = 1;
    for (int changed = 1; changed; ) {
        changed = 0;
        for (size_t i = 1; i < ncand; i++) {
            if (c[i].in || !c[i].p || superseded_flush(c, i))
                continue;
            for (size_t j = 0; j < ncand && !c[i].in; j++) {
                if (!c[j].in)
                    continue;
                if (child_of(c[i].p, c[j].p) || child_of(c[j].p, c[i].p)) {
                    c[i].in = 1;
                    members++;
                    changed = 1;
                }
            }
        }
    }
    char **paths = calloc(members, sizeof *paths);
    if (!paths) {
        cli_fail("out of memory");
        rc = -1;
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < ncand; i++)
        if (c[i].in) {
            paths[k++] = c[i].path;
            c[i].path = NULL;
        }
    if (members == 1) {
        fprintf(stderr, "hookit: report: reading %s, the newest profile in %s\n", paths[0], where);
    } else {
        fprintf(stderr,
                "hookit: report: reading %s, the newest profile in %s, "
                "and its fork family: %zu profiles (",
                paths[0], where, members);
        for (size_t i = 0; i < members; i++)
            fprintf(stderr, "%s%s", i ? " " : "", paths[i]);
        fputs(")\n", stderr);
    }
    *paths_out = paths;
    *n_out = members;
out:
    for (size_t i = 0; i < n; i++) {
        free(c[i].path);
        profile_free(c[i].p);
    }
    free(c);
    return rc;
}
