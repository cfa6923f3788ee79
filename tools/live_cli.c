/* Helpers of the live commands (live_cli.h). */
#include "tools/live_cli.h"
#include "tools/cli.h"
#include "profile/inlined.h"
#include <hookit/a2n.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

struct profile *live_cli_profile(struct live *l, enum live_consistency c, const char *end,
                                 struct a2n *a2n, struct live_snapshot *keep)
{
    char err[1024];
    struct live_snapshot s;
    if (live_snapshot(l, c, &s, err, sizeof err) != 0) {
        cli_fail("process %d: %s", (int)live_pid(l), err);
        return NULL;
    }
    struct profile *p = live_profile(l, &s, end);
    if (p && resolve(p, a2n) != 0) {
        profile_free(p);
        p = NULL;
    }
    if (!p)
        cli_fail("out of memory");
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
