/* Helpers of the live commands (live_cli.h). */
#include "tools/live_cli.h"
#include "tools/cli.h"
#include "profile/inlined.h"
#include <hookit/a2n.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

pid_t live_cli_pid(const char *cmd, const char *text)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end || v <= 0 || v > 0x7fffffff) {
        cli_usage_error(cmd, "'%s' is not a process id", text);
        return -1;
    }
    return (pid_t)v;
}

struct live *live_cli_attach(pid_t pid, int flags)
{
    char err[8192];
    struct live *l = live_attach(pid, flags, err, sizeof err);
    if (!l)
        cli_fail("%s", err);
    return l;
}

/* Names for the function table, through A2N, and the modules of inlined
 * copies (as libjprof does at exit). */
static const char hook_symbol[] = PROFILE_HOOK_SYMBOL;

static int resolve(struct profile *p, struct a2n *a2n)
{
    unsigned char *foreign = calloc(p->nfuncs + 1, 1);
    int rc = foreign ? 0 : -1, any = 0;
    for (uint32_t i = 0; i < p->nfuncs && rc == 0; i++) {
        struct prof_func *f = &p->funcs[i];
        struct a2n_result r;
        if (f->name)
            continue; /* a frame the arena names (MPI, Java) */
        char fallback[32];
        if (a2n) {
            a2n_lookup(a2n, f->addr, 1, &r);
        } else {
            snprintf(fallback, sizeof fallback, "0x%llx", (unsigned long long)f->addr);
            r = (struct a2n_result){ .module = "[unknown]", .function = fallback };
        }
        if (a2n && (r.flags & A2N_FOUND_MODULE) && a2n_module_names(a2n, f->addr, hook_symbol) == 0)
            any = foreign[i] = 1;
        rc = profile_name_func(p, f, r.function, r.module, r.file, r.line);
    }
    if (rc == 0 && any)
        rc = profile_attribute_inlined(p, foreign);
    free(foreign);
    return rc;
}

struct profile *live_cli_named(struct live *l, const struct live_snapshot *s, const char *end,
                               struct a2n *a2n)
{
    struct profile *p = live_profile(l, s, end);
    if (p && resolve(p, a2n) != 0) {
        profile_free(p);
        p = NULL;
    }
    if (!p)
        cli_fail("out of memory");
    return p;
}

struct profile *live_cli_profile(struct live *l, enum live_consistency c, const char *end,
                                 struct a2n *a2n, struct live_snapshot *keep)
{
    char err[1024];
    struct live_snapshot s;
    if (live_snapshot(l, c, &s, err, sizeof err) != 0) {
        cli_fail("process %d: %s", (int)live_pid(l), err);
        return NULL;
    }
    struct profile *p = live_cli_named(l, &s, end, a2n);
    if (keep)
        *keep = s;
    else
        live_snapshot_free(&s);
    return p;
}

static int write_prof(FILE *out, void *ctx)
{
    fflush(out);
    if (profile_write_fd(ctx, fileno(out)) != 0) {
        cli_fail("error writing the profile: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int live_cli_write(const char *path, const struct profile *p)
{
    return cli_write_output(path, write_prof, (void *)p);
}

int live_cli_ms(const char *text)
{
    char *end;
    double v = strtod(text, &end);
    if (*end || !(v > 0) || v > 86400)
        return -1;
    int ms = (int)(v * 1000 + 0.5);
    return ms > 0 ? ms : 1;
}

/* Where pid writes its profile: its $HOOKIT_OUTPUT (from
 * /proc/PID/environ, read while it runs), relative to its working
 * directory, or that directory.  "" when /proc does not say. */
void live_cli_outdir(pid_t pid, char *dir, size_t size)
{
    char path[64], cwd[PATH_MAX] = "", env[PATH_MAX] = "";
    dir[0] = '\0';
    snprintf(path, sizeof path, "/proc/%d/cwd", (int)pid);
    ssize_t n = readlink(path, cwd, sizeof cwd - 1);
    cwd[n > 0 ? n : 0] = '\0';
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    FILE *f = fopen(path, "r");
    char *var = NULL;
    size_t cap = 0;
    while (f && getdelim(&var, &cap, '\0', f) > 0)
        if (!strncmp(var, "HOOKIT_OUTPUT=", 14) && var[14])
            snprintf(env, sizeof env, "%s", var + 14);
    free(var);
    if (f)
        fclose(f);
    if (env[0] == '/')
        snprintf(dir, size, "%s", env);
    else if (env[0] && cwd[0])
        snprintf(dir, size, "%s/%s", cwd, env);
    else
        snprintf(dir, size, "%s", cwd);
}

/* Whether name is a profile or trace of pid (hookit.EXE[.rRANK].PID[.N]
 * .prof or .trace). */
static int of_pid(const char *name, pid_t pid)
{
    char mid[32];
    snprintf(mid, sizeof mid, ".%d.", (int)pid);
    const char *dot = strrchr(name, '.');
    return !strncmp(name, "hookit.", 7) && strstr(name, mid) && dot
        && (!strcmp(dot, ".prof") || !strcmp(dot, ".trace"));
}

/* The newest; 1 found, 0 not. */
int live_cli_written(const char *dir, pid_t pid, char *name, size_t size)
{
    DIR *d = *dir ? opendir(dir) : NULL;
    struct dirent *e;
    int found = 0;
    struct timespec newest = { 0, 0 };
    while (d && (e = readdir(d))) {
        if (!of_pid(e->d_name, pid))
            continue;
        char path[PATH_MAX + NAME_MAX + 2];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0)
            continue;
        if (!found || st.st_mtim.tv_sec > newest.tv_sec
            || (st.st_mtim.tv_sec == newest.tv_sec && st.st_mtim.tv_nsec > newest.tv_nsec)) {
            snprintf(name, size, "%s", e->d_name);
            newest = st.st_mtim;
        }
        found = 1;
    }
    if (d)
        closedir(d);
    return found;
}

/* The order a process names its profiles in: the first free of
 * hookit.E.P.prof, hookit.E.P.1.prof, .2, ... (a shorter name first). */
static int name_order(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    return la != lb ? (la < lb ? -1 : 1) : strcmp(a, b);
}

int live_cli_last_name(const char *dir, pid_t pid, char *name, size_t size)
{
    DIR *d = *dir ? opendir(dir) : NULL;
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        if (of_pid(e->d_name, pid) && (!found || name_order(e->d_name, name) > 0)) {
            snprintf(name, size, "%s", e->d_name);
            found = 1;
        }
    if (d)
        closedir(d);
    return found;
}

int live_cli_next_name(const char *dir, pid_t pid, const char *after, char *name, size_t size)
{
    DIR *d = *dir ? opendir(dir) : NULL;
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        if (of_pid(e->d_name, pid) && (!*after || name_order(e->d_name, after) > 0)
            && (!found || name_order(e->d_name, name) < 0)) {
            snprintf(name, size, "%s", e->d_name);
            found = 1;
        }
    if (d)
        closedir(d);
    return found;
}
