/* Writing the process's profile: hookit.<exe>[.r<rank>].<pid>.prof in
 * HOOKIT_OUTPUT, atomically, never over an existing file: when the name is
 * taken (a flush, or an exec that kept the pid) a counter is added. */
#include "jprof.h"
#include "profile/profile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_TRIES 100

/* The executable's base name, safe as part of a file name. */
JP_NOINSTR static void exe_name(char *out, size_t size)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    path[n > 0 ? n : 0] = 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!*base)
        base = program_invocation_short_name;
    snprintf(out, size, "%.200s", base);
    for (char *c = out; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '_' || *c == '-' || *c == '+'))
            *c = '_';
}

JP_NOINSTR static void file_name(char *out, size_t size, const char *exe, int attempt)
{
    char rank[24] = "", extra[16] = "";
    if (jp_rank >= 0)
        snprintf(rank, sizeof rank, ".r%d", jp_rank);
    if (attempt > 0)
        snprintf(extra, sizeof extra, ".%d", attempt);
    snprintf(out, size, "hookit.%s%s.%d%s.prof", exe, rank, (int)getpid(), extra);
}

JP_NOINSTR int jp_write_profile(int how)
{
    int saved = errno;
    struct profile *p = jp_build_profile(how);
    if (!p) {
        jp_host->log("jprof: out of memory building the profile; none written");
        errno = saved;
        return -1;
    }
    char exe[256], name[600], err[512];
    exe_name(exe, sizeof exe);
    int rc = -1;
    for (int attempt = 0; attempt < MAX_TRIES; attempt++) {
        file_name(name, sizeof name, exe, attempt);
        rc = profile_write_file(p, jp_host->output_dir, name, err, sizeof err);
        if (rc == 0 || errno != EEXIST)
            break;
    }
    if (rc != 0)
        jp_host->log("jprof: cannot write profile to %s: %s", jp_host->output_dir, err);
    else
        jp_host->debug_log("jprof: wrote %s/%s", jp_host->output_dir, name);
    profile_free(p);
    errno = saved;
    return rc;
}
