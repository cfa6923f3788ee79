/* What every profile says about its process and how it was taken: its
 * identity and arguments, the metadata every profile carries, the
 * executable's base name (safe inside a file name), and the name of a
 * profile file.  Shared by libjprof, libhktrace and the live reader. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* program_invocation_short_name (also built alone, by tests) */
#endif
#include "profile/procinfo.h"
#include "profile/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define NOINSTR __attribute__((no_instrument_function))

#ifndef HOOKIT_VERSION
#define HOOKIT_VERSION "unknown"        /* built alone, by tests */
#endif

NOINSTR int procinfo_set_meta_u64(struct profile *p, const char *key, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return profile_set_meta(p, key, buf);
}

NOINSTR int procinfo_set_meta(struct profile *p, const struct procinfo_meta *m)
{
    char buf[256];
    struct utsname u;
    int rc = uname(&u) == 0 ? profile_set_meta(p, "hostname", u.nodename) : 0;
    rc |= profile_set_meta(p, "hookit_version", HOOKIT_VERSION);
    rc |= profile_set_meta(p, "profiler", m->profiler);
    rc |= profile_set_meta(p, "clock", m->clock);
    snprintf(buf, sizeof buf, "%.6f", m->ticks_per_ns);
    rc |= profile_set_meta(p, "ticks_per_ns", buf);
    rc |= profile_set_meta(p, "end", m->end);
    if (m->signal > 0) {
        snprintf(buf, sizeof buf, "%d (%s)", m->signal, strsignal(m->signal));
        rc |= profile_set_meta(p, "signal", buf);
    }
    return rc ? -1 : 0;
}

NOINSTR int procinfo_fill_self(struct profile *p, pid_t pid, pid_t ppid, int rank, int size)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    p->process.pid = pid;
    p->process.ppid = ppid;
    p->process.rank = rank;
    p->process.size = size;
    p->process.exe = profile_intern(p, exe);
    return p->process.exe ? procinfo_fill_argv(p) : -1;
}

NOINSTR int procinfo_fill_argv(struct profile *p)
{
    static char buf[65536];     /* at exit, maybe in a signal path: no big stack */
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t len = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (len < 0)
        len = 0;
    buf[len] = 0;
    uint32_t argc = 0;
    for (ssize_t i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1)
        argc++;
    p->process.argv = profile_alloc(p, (argc + 1) * sizeof *p->process.argv);
    if (!p->process.argv)
        return -1;
    uint32_t k = 0;
    for (ssize_t i = 0; i < len && k < argc; i += (ssize_t)strlen(buf + i) + 1)
        if (!(p->process.argv[k++] = profile_intern(p, buf + i)))
            return -1;
    p->process.argc = k;
    return 0;
}

NOINSTR void procinfo_exe_name(char *out, size_t size)
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

NOINSTR void procinfo_file_name(char *out, size_t size, const char *exe, int rank, int pid,
                                int attempt, const char *suffix)
{
    char r[24] = "", extra[16] = "";
    if (rank >= 0)
        snprintf(r, sizeof r, ".r%d", rank);
    if (attempt > 0)
        snprintf(extra, sizeof extra, ".%d", attempt);
    snprintf(out, size, "hookit.%s%s.%d%s.%s", exe, r, pid, extra, suffix);
}

NOINSTR const char *procinfo_end_name(int how)
{
    switch (how) {
    case 2: return "signal";    /* HOOKIT_END_SIGNAL */
    case 3: return "exec";      /* HOOKIT_END_EXEC */
    case 1: return "exit";      /* HOOKIT_END_EXIT */
    default: return "flush";
    }
}

NOINSTR pid_t procinfo_parent(pid_t pid, char *comm, size_t size)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    int ok = f && fgets(line, sizeof line, f);
    if (f)
        fclose(f);
    /* the command name may hold spaces and parentheses: up to the last ')' */
    char *open = ok ? strchr(line, '(') : NULL, *close = ok ? strrchr(line, ')') : NULL;
    int ppid = 0;
    if (!open || !close || close < open || sscanf(close + 1, " %*c %d", &ppid) != 1)
        return 0;
    if (comm)
        snprintf(comm, size, "%.*s", (int)(close - open - 1), open + 1);
    return (pid_t)ppid;
}

NOINSTR ssize_t procinfo_read(pid_t pid, const char *what, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 && size > 0 ? read(fd, buf, size - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n < 0)
        return -1;
    buf[n] = 0;
    return n;
}
