/*
 * The registry of live processes: a per-user directory (mode 0700, owned
 * by the user) holding, for every process profiled by libjprof,
 *   PID.arena   the arena (profile/arena.h), mapped MAP_SHARED by the process
 *   PID.maps    a copy of its /proc/PID/maps (at start and after each dlopen),
 *               so `hookit recover` can name a killed process's functions.
 * The directory is $HOOKIT_RUNTIME_DIR when set, else /dev/shm/hookit-UID.
 * See docs/live.md.
 */
#ifndef HOOKIT_REGISTRY_H
#define HOOKIT_REGISTRY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define REGISTRY_PATH_MAX 4096

/* The registry directory of user uid into out.  With create, a missing
 * directory is made (mode 0700).  The directory must be a real directory
 * (not a symlink) owned by uid with no group or other permissions.
 * Returns 0, or -1 with a one-line reason in err. */
int registry_dir(uid_t uid, int create, char *out, size_t size, char *err, size_t errlen);
/* The default registry directory of uid, /dev/shm/hookit-UID, whatever
 * HOOKIT_RUNTIME_DIR says. */
void registry_default_dir(uid_t uid, char *out, size_t size);
/* Is dir a registry directory of uid (a real directory, owned by uid, no
 * group or other permissions)?  0, or -1 with the reason in err. */
int registry_dir_check(const char *dir, uid_t uid, char *err, size_t errlen);

/* The arenas a root process moved when it dropped root for another user
 * (profiler/jprof/base/arena.c): beside root's registry `registry`, in the
 * registries of other users (`<registry's parent>/hookit-UID`, owned by
 * UID, mode 0700), PID.arena files owned by root.  fn is called with each
 * one's directory and pid until it returns non-zero (which is returned).
 * Only root can look into those directories.  Allocates nothing (opendir
 * aside). */
typedef int (*registry_moved_fn)(void *ctx, const char *dir, pid_t pid);
int registry_moved_each(const char *registry, registry_moved_fn fn, void *ctx);

/* DIR/PIDSUFFIX, e.g. registry_file(buf, n, dir, 42, ".arena"). */
void registry_file(char *out, size_t size, const char *dir, pid_t pid, const char *suffix);

/* Field 22 of /proc/PID/task/PID/stat (start time in clock ticks since
 * boot), or 0. */
uint64_t registry_starttime(pid_t pid);

/* Whether the process that registered with (pid, starttime) still runs:
 * kill(pid, 0) does not say ESRCH and, when both start times are known,
 * they agree (a reused pid is another process). */
int registry_alive(pid_t pid, uint64_t starttime);

#endif
