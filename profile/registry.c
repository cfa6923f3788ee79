/* The registry of live processes (registry.h): where it is, and whether a
 * registered process still runs.  Used inside the profiled process (by
 * libjprof) and by the tools, so no allocation and errno kept. */
#include "profile/registry.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void say(char *err, size_t errlen, const char *fmt, const char *path, const char *why)
{
    if (err && errlen)
        snprintf(err, errlen, fmt, path, why);
}

void registry_default_dir(uid_t uid, char *out, size_t size)
{
    snprintf(out, size, "/dev/shm/hookit-%u", (unsigned)uid);
}

int registry_dir(uid_t uid, int create, char *out, size_t size, char *err, size_t errlen)
{
    int saved = errno;
    const char *env = getenv("HOOKIT_RUNTIME_DIR");
    if (env && *env)
        snprintf(out, size, "%s", env);
    else
        registry_default_dir(uid, out, size);
    if (create && mkdir(out, 0700) != 0 && errno != EEXIST) {
        say(err, errlen, "cannot create the registry directory %s: %s", out, strerror(errno));
        errno = saved;
        return -1;
    }
    int rc = registry_dir_check(out, uid, err, errlen);
    errno = saved;
    return rc;
}

int registry_dir_check(const char *out, uid_t uid, char *err, size_t errlen)
{
    int saved = errno;
    struct stat st;
    int rc = -1;
    if (lstat(out, &st) != 0)
        say(err, errlen, "no registry directory %s (%s): is the process profiled by libjprof?",
            out, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        say(err, errlen, "registry %s is not a directory%s: refused", out,
            S_ISLNK(st.st_mode) ? " (a symbolic link)" : "");
    else if (st.st_uid != uid)
        say(err, errlen, "registry directory %s is not owned by the expected user%s: refused", out,
            "");
    else if (st.st_mode & 077)
        say(err, errlen, "registry directory %s is accessible to other users%s: refused (want mode 0700)",
            out, "");
    else
        rc = 0;
    errno = saved;
    return rc;
}

void registry_file(char *out, size_t size, const char *dir, pid_t pid, const char *suffix)
{
    snprintf(out, size, "%s/%d%s", dir, (int)pid, suffix);
}

uint64_t registry_starttime(pid_t pid)
{
    int saved = errno;
    char path[64], buf[1024];
    /* The main thread's task entry, whose start time is the process's:
     * qemu-user answers a program's reads of its own /proc/PID/stat with
     * a made-up one whose start time is a few ticks off the real one, so
     * a reader would take the live process for a new one with its pid. */
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    errno = saved;
    if (n <= 0)
        return 0;
    buf[n] = 0;
    /* The command name may hold spaces and parentheses: count from the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    p++;
    for (int field = 3; field < 22 && p; field++) {
        p = strchr(p + 1, ' ');
    }
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

int registry_alive(pid_t pid, uint64_t starttime)
{
    int saved = errno;
    int gone = pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH);
    errno = saved;
    if (gone)
        return 0;
    uint64_t now = registry_starttime(pid);
    return !(starttime && now && now != starttime);
}

/* Root's PID.arena files in one other user's registry: fn for each. */
static int moved_in(const char *dir, registry_moved_fn fn, void *ctx)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        char *end, path[REGISTRY_PATH_MAX + 600];
        long pid = strtol(e->d_name, &end, 10);
        struct stat st;
        if (e->d_name[0] == '.' || pid <= 0 || strcmp(end, ".arena") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0)
            rc = fn(ctx, dir, (pid_t)pid);
    }
    closedir(d);
    return rc;
}

int registry_moved_each(const char *registry, registry_moved_fn fn, void *ctx)
{
    int saved = errno;
    char parent[REGISTRY_PATH_MAX], dir[REGISTRY_PATH_MAX + 300];
    const char *slash = strrchr(registry, '/');
    snprintf(parent, sizeof parent, "%.*s", slash ? (int)(slash - registry) : 0, registry);
    DIR *d = opendir(*parent ? parent : "/");
    if (!d) {
        errno = saved;
        return 0;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        char *end;
        if (strncmp(e->d_name, "hookit-", 7) != 0 || !e->d_name[7])
            continue;
        unsigned long uid = strtoul(e->d_name + 7, &end, 10);
        if (*end || uid == 0 || uid > (uid_t)-2)
            continue;
        snprintf(dir, sizeof dir, "%s/%s", parent, e->d_name);
        if (strcmp(dir, registry) != 0 && registry_dir_check(dir, (uid_t)uid, NULL, 0) == 0)
            rc = moved_in(dir, fn, ctx);
    }
    closedir(d);
    errno = saved;
    return rc;
}
