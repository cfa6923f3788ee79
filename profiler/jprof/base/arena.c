/* The shared arena: every thread's tree in one MAP_SHARED mapping of a file
 * in the per-user registry (profile/registry.h), PID.arena, so a reader in
 * another process (`hookit top`, `snapshot`, `ctl`, `recover`) can map the
 * same pages and follow 32-bit slot references.  The file is sized once to
 * the whole reservation; tmpfs allocates pages only when touched, so nothing
 * grows on the hot path.  The file descriptor is closed once mapped: the
 * program's descriptors stay as they were.
 *
 * Fallbacks, each said once with HOOKIT_DEBUG=1 (an unsafe registry
 * directory is said always): no usable registry -> a memfd (same profile,
 * no live view); a file-size limit (RLIMIT_FSIZE: growing a file past it
 * raises SIGXFSZ) or no memfd -> anonymous memory (same profile, no live
 * view).
 *
 * Lifetime of the registry files: made at start (stale files of dead
 * processes cleaned then), removed after the profile is written at normal
 * exit or death by a signal; a forked child gets its own; an exec hides the
 * old image's files (renamed to .PID.*) and a failed exec brings them back;
 * the new image removes them when it registers under the same pid. */
#include "profiler/jprof/jprof.h"
#include "profile/registry.h"

#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ARENA_RESERVE (16ull << 30)     /* address space: 256M slots */
/* A killed process's leftover is kept this long for `hookit recover`
 * before a newly registering process removes it, and only the newest
 * LEFTOVER_KEEP_MAX of them. */
#define LEFTOVER_KEEP_S (24 * 3600)
#define LEFTOVER_KEEP_MAX 16

char *jp_arena_base;
static char registry[REGISTRY_PATH_MAX];  /* our registry directory, "" when none */
static pid_t registered_pid;              /* the pid our files are named after, 0 = none */
/* The loaded objects the maps copy was taken with (loaded.c), 0 unknown;
 * the lock keeps a copy and the set it is labelled with together. */
static uint64_t saved_set;
static pthread_mutex_t saved_lock = PTHREAD_MUTEX_INITIALIZER;

JP_NOINSTR struct arena_header *jp_arena_header(void)
{
    return (struct arena_header *)jp_arena_base;
}

JP_NOINSTR static struct arena_process *process_block(void)
{
    return jp_at(ARENA_PROCESS_REF);
}

JP_NOINSTR static int file_size_unlimited(void)
{
    struct rlimit rl;
    return getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
           rl.rlim_cur >= ARENA_RESERVE;
}

/* ---- registry files ---------------------------------------------------- */

JP_NOINSTR static void unlink_pair(const char *dir, pid_t pid, const char *prefix)
{
    char path[REGISTRY_PATH_MAX + 64], name[64];
    snprintf(name, sizeof name, "%s%d.arena", prefix, (int)pid);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
    snprintf(path, sizeof path, "%s/%s%d.maps", dir, prefix, (int)pid);
    unlink(path);
}

/* The start time stored in a leftover arena, 0 when unreadable; *foreign
 * when we may not read it (root's files, moved here when a root process
 * dropped root for us: root's `hookit recover` reads them). */
JP_NOINSTR static uint64_t leftover_starttime(const char *path, int *recoverable, int *foreign)
{
    struct arena_header h;
    struct arena_process pr;
    *recoverable = *foreign = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        *foreign = errno == EACCES;
        return 0;
    }
    int ok = pread(fd, &h, sizeof h, 0) == sizeof h && pread(fd, &pr, sizeof pr, ARENA_SLOT) == sizeof pr &&
             !memcmp(h.magic, ARENA_MAGIC, 8);
    close(fd);
    *recoverable = ok && h.first_thread != 0;
    return ok ? pr.proc_starttime : 0;
}

/* A killed process's leftover kept for `hookit recover`. */
struct leftover {
    pid_t pid;
    time_t created;
};

JP_NOINSTR static int newest_first(const void *a, const void *b)
{
    const struct leftover *x = a, *y = b;
    return (x->created < y->created) - (x->created > y->created);
}

/* Keep the LEFTOVER_KEEP_MAX newest leftovers: each holds the pages its
 * trees used, in memory (tmpfs), and a test suite or a crash loop that
 * kills many programs must not fill it. */
JP_NOINSTR static void keep_newest(const char *dir, struct leftover *l, size_t n)
{
    if (n <= LEFTOVER_KEEP_MAX)
        return;
    qsort(l, n, sizeof *l, newest_first);
    for (size_t i = LEFTOVER_KEEP_MAX; i < n; i++)
        unlink_pair(dir, l[i].pid, "");
}

/* Remove what dead processes left behind: files of an exec'ed-away image
 * whose process is gone (or is us), maps copies cut short, damaged or
 * empty arenas, and killed processes' arenas (ours, or root's that moved
 * here when a root process dropped root for us) beyond the newest
 * LEFTOVER_KEEP_MAX or older than LEFTOVER_KEEP_S (until then they wait
 * for `hookit recover`).  Never a live process's files. */
JP_NOINSTR static void clean_stale(const char *dir, pid_t self)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    time_t now = time(NULL);
    struct leftover *kept = NULL;
    size_t nkept = 0, cap = 0;
    while ((e = readdir(d))) {
        char *end;
        const char *name = e->d_name;
        int hidden = name[0] == '.';
        long pid = strtol(name + hidden, &end, 10);
        size_t len = strlen(name);
        if (hidden && pid > 0 && len > 9 && !strcmp(name + len - 9, ".maps.tmp") &&
            !registry_alive((pid_t)pid, 0)) {
            char tmp[REGISTRY_PATH_MAX + 300];      /* a maps copy cut short by a kill */
            snprintf(tmp, sizeof tmp, "%s/%s", dir, name);
            unlink(tmp);
            continue;
        }
        if (pid <= 0 || strcmp(end, ".arena") != 0)
            continue;
        if (hidden) {           /* an exec'ed-away image: ours, or its process is gone */
            if (pid == self || !registry_alive((pid_t)pid, 0))
                unlink_pair(dir, (pid_t)pid, ".");
            continue;
        }
        if (pid == self)
            continue;
        char path[REGISTRY_PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        int recoverable, foreign;
        uint64_t start = leftover_starttime(path, &recoverable, &foreign);
        if (registry_alive((pid_t)pid, start))
            continue;
        struct stat st;
        int stat_ok = lstat(path, &st) == 0;
        /* One we may not read is kept for its owner's `recover` like ours,
         * within the same bounds. */
        if ((!recoverable && !foreign) || !stat_ok || now - st.st_mtime > LEFTOVER_KEEP_S) {
            unlink_pair(dir, (pid_t)pid, "");
            continue;
        }
        if (nkept == cap) {
            size_t want = cap ? cap * 2 : 64;
            struct leftover *bigger = realloc(kept, want * sizeof *kept);
            if (!bigger)
                continue;
            kept = bigger;
            cap = want;
        }
        kept[nkept++] = (struct leftover){ (pid_t)pid, st.st_mtime };
    }
    closedir(d);
    keep_newest(dir, kept, nkept);
    free(kept);
}

/* Copy /proc/self/maps to PID.maps (temporary file, then rename).  The
 * copies at start and in a forked child are labelled with no set: the
 * first dlopen takes another. */
JP_NOINSTR static void save_maps(void)
{
    __atomic_store_n(&saved_set, 0, __ATOMIC_RELEASE);
    if (!registered_pid)
        return;
    int saved = errno;
    char tmp[REGISTRY_PATH_MAX + 64], path[REGISTRY_PATH_MAX + 64], buf[16384];
    /* One temporary name per thread: two threads may dlopen at once. */
    snprintf(tmp, sizeof tmp, "%s/.%d.%ld.maps.tmp", registry, (int)registered_pid, (long)syscall(SYS_gettid));
    registry_file(path, sizeof path, registry, registered_pid, ".maps");
    int in = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    unlink(tmp);
    int out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int ok = in >= 0 && out >= 0;
    ssize_t n;
    while (ok && (n = read(in, buf, sizeof buf)) > 0)
        ok = write(out, buf, (size_t)n) == n;
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
    errno = saved;
}

/* A new registry file PID.arena of the reservation's size, or -1. */
JP_NOINSTR static int new_registry_file(void)
{
    char err[REGISTRY_PATH_MAX + 128], path[REGISTRY_PATH_MAX + 64];
    if (getauxval(AT_SECURE)) {
        /* set-user-ID/-group-ID: HOOKIT_RUNTIME_DIR is the caller's word,
         * the files would be created with the program's rights. */
        jp_host->debug_log("jprof: set-user-ID or set-group-ID program: no live view");
        return -1;
    }
    if (registry_dir(geteuid(), 1, registry, sizeof registry, err, sizeof err) != 0) {
        if (errno == ENOENT || !strstr(err, "refused"))
            jp_host->debug_log("jprof: %s; no live view", err);
        else
            jp_host->log("jprof: %s; no live view", err);
        registry[0] = 0;
        return -1;
    }
    pid_t pid = getpid();
    clean_stale(registry, pid);
    registry_file(path, sizeof path, registry, pid, ".arena");
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* Our pid's file: a previous process with this pid died without
         * cleaning up (it cannot be alive: the pid is ours now). */
        unlink(path);
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    }
    if (fd >= 0 && ftruncate(fd, (off_t)ARENA_RESERVE) != 0) {
        close(fd);
        unlink(path);
        fd = -1;
    }
    if (fd < 0) {
        jp_host->debug_log("jprof: cannot create %s: %s; no live view", path, strerror(errno));
        registry[0] = 0;
        return -1;
    }
    registered_pid = pid;
    return fd;
}

/* The backing file: a registry file, else a memfd, else -1 (anonymous). */
JP_NOINSTR static int new_backing_file(void)
{
    if (!file_size_unlimited()) {
        jp_host->debug_log("jprof: a file-size limit is set (RLIMIT_FSIZE): trees in anonymous "
                           "memory, no live view");
        return -1;
    }
    int fd = new_registry_file();
    if (fd >= 0)
        return fd;
    fd = memfd_create("hookit-jprof", MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, (off_t)ARENA_RESERVE) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

JP_NOINSTR static void *map_backing(void *at, int fd)
{
    int fixed = at ? MAP_FIXED : 0;
    if (fd >= 0)
        return mmap(at, ARENA_RESERVE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE | fixed, fd, 0);
    return mmap(at, ARENA_RESERVE, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | fixed, -1, 0);
}

JP_NOINSTR static void unregister_files(void)
{
    if (registered_pid) {
        char path[REGISTRY_PATH_MAX + 64];
        registry_file(path, sizeof path, registry, registered_pid, ".arena");
        if (unlink(path) != 0 && errno != ENOENT) {
            /* Not ours to remove any more (a change of user we did not
             * see): say in the file that nothing is to be recovered. */
            __atomic_thread_fence(__ATOMIC_RELEASE);
            memcpy(jp_arena_header()->magic, ARENA_MAGIC_ENDED, 8);
        }
        registry_file(path, sizeof path, registry, registered_pid, ".maps");
        unlink(path);
    }
    registered_pid = 0;
}

/* ---- process metadata (slot 1) ------------------------------------------ */

JP_NOINSTR static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A NUL-terminated copy of len bytes in new arena slots; 0 when full. */
JP_NOINSTR static arena_ref store_bytes(const char *s, size_t len)
{
    arena_ref r = jp_arena_alloc((uint32_t)((len + 1 + ARENA_SLOT - 1) / ARENA_SLOT));
    if (r) {
        memcpy(jp_at(r), s, len);
        ((char *)jp_at(r))[len] = 0;
    }
    return r;
}

JP_NOINSTR static void fill_process_block(void)
{
    struct arena_process *pr = process_block();
    memset(pr, 0, sizeof *pr);
    hk_clock_pair(&pr->start_mono_ns, &pr->start_tsc); /* a reader's rate is measured from them */
    pr->start_wall_ns = clock_ns(CLOCK_REALTIME);
    pr->proc_starttime = registry_starttime(getpid());
    pr->uid = (uint32_t)geteuid();
    pr->sample_us = jp_opt.sample ? jp_opt.sample_us : 0;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    pr->exe = store_bytes(exe, n > 0 ? (size_t)n : 0);
    static char args[65536];            /* not on the stack: the program's may be small */
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    n = fd >= 0 ? read(fd, args, sizeof args - 1) : -1;
    if (fd >= 0)
        close(fd);
    pr->argv = store_bytes(args, n > 0 ? (size_t)n : 0);
    pr->argv_len = n > 0 ? (uint32_t)n : 0;
}

JP_NOINSTR int jp_arena_init(void)
{
    int saved = errno;
    int fd = new_backing_file();
    void *base = map_backing(NULL, fd);
    if (base == MAP_FAILED && fd >= 0) {
        close(fd);
        unregister_files();
        fd = -1;
        base = map_backing(NULL, -1);
    }
    if (fd >= 0)
        close(fd);
    errno = saved;
    if (base == MAP_FAILED)
        return -1;
    jp_arena_base = base;
    struct arena_header *h = jp_arena_header();
    h->version = ARENA_VERSION;
    h->slot_size = ARENA_SLOT;
    /* slot 0 is this header, slot 1 the process block, slot 2 the control
     * log, slot 3 struct arena_more (both zero: the mapping is new);
     * allocations are pairs */
    h->used = 4 * ARENA_SLOT;
    h->pid = getpid();
    fill_process_block();
    save_maps();
    /* The magic last: a reader that finds it finds a complete header. */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    memcpy(h->magic, ARENA_MAGIC, 8);
    errno = saved;
    return 0;
}

/* Every allocation is a whole number of slot pairs (128 bytes, from slot
 * 4 on): most belong to one thread, which writes them on its hot path, and
 * a CPU's adjacent-line prefetcher fetches a line's pair with it, so no
 * pair is split between two threads' data. */
JP_NOINSTR arena_ref jp_arena_alloc(uint32_t nslots)
{
    uint64_t bytes = (uint64_t)(nslots + (nslots & 1)) * ARENA_SLOT;
    uint64_t off = __atomic_fetch_add(&jp_arena_header()->used, bytes, __ATOMIC_RELAXED);
    if (off + bytes > ARENA_RESERVE)
        return 0;
    return (arena_ref)(off / ARENA_SLOT);
}

/* After fork the child shares the parent's pages: give it its own copy at
 * the same address so every reference stays valid, in its own registry
 * file. */
JP_NOINSTR int jp_arena_fork_child(void)
{
    int saved = errno;
    uint64_t used = jp_arena_header()->used;
    if (used > ARENA_RESERVE)
        used = ARENA_RESERVE;
    registered_pid = 0;                 /* the parent's files are the parent's */
    /* The only thread now may not be the one that held it. */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    saved_lock = fresh;
    int fd = new_backing_file();
    int ok = 0;
    if (fd >= 0) {
        uint64_t done = 0;
        while (done < used) {
            ssize_t w = pwrite(fd, jp_arena_base + done, used - done, (off_t)done);
            if (w <= 0)
                break;
            done += (uint64_t)w;
        }
        ok = done == used && map_backing(jp_arena_base, fd) != MAP_FAILED;
        close(fd);
        if (!ok)
            unregister_files();
    }
    if (!ok) {
        /* Private anonymous copy: map fresh pages elsewhere, copy, move. */
        void *copy = map_backing(NULL, -1);
        ok = copy != MAP_FAILED;
        if (ok) {
            memcpy(copy, jp_arena_base, used);
            ok = mremap(copy, ARENA_RESERVE, ARENA_RESERVE, MREMAP_MAYMOVE | MREMAP_FIXED,
                        jp_arena_base) != MAP_FAILED;
        }
    }
    struct arena_header *h = jp_arena_header();
    h->pid = getpid();
    /* Commands and pauses in flight were the parent's. */
    h->control = ARENA_CMD_NONE;
    h->attention = 0;
    h->control_done = h->control_seq;
    /* and the job: the child is not the rank (its named frames stay) */
    memset(&((struct arena_more *)jp_at(ARENA_MORE_REF))->job, 0, sizeof(struct arena_job));
    fill_process_block();
    save_maps();
    errno = saved;
    return ok ? 0 : -1;
}

/* ---- the registry over the process's life -------------------------------- */

JP_NOINSTR int jp_arena_live(void)
{
    return registered_pid != 0;
}

/* The process ends (after its profile is written), or its image is
 * replaced by exec: then the files are only hidden, for a failed exec. */
JP_NOINSTR void jp_arena_unregister(int how)
{
    int saved = errno;
    if (registered_pid && how == HOOKIT_END_EXEC) {
        char from[REGISTRY_PATH_MAX + 64], to[REGISTRY_PATH_MAX + 64];
        static const char *const suffixes[] = { ".arena", ".maps" };
        for (int i = 0; i < 2; i++) {
            registry_file(from, sizeof from, registry, registered_pid, suffixes[i]);
            snprintf(to, sizeof to, "%s/.%d%s", registry, (int)registered_pid, suffixes[i]);
            rename(from, to);
        }
    } else {
        unregister_files();
    }
    errno = saved;
}

/* The exec failed: this image goes on, and so does its live view. */
JP_NOINSTR void jp_arena_exec_failed(void)
{
    int saved = errno;
    if (registered_pid) {
        char from[REGISTRY_PATH_MAX + 64], to[REGISTRY_PATH_MAX + 64];
        static const char *const suffixes[] = { ".arena", ".maps" };
        for (int i = 0; i < 2; i++) {
            snprintf(from, sizeof from, "%s/.%d%s", registry, (int)registered_pid, suffixes[i]);
            registry_file(to, sizeof to, registry, registered_pid, suffixes[i]);
            rename(from, to);
        }
    }
    errno = saved;
}

/* A process about to change user (a server's worker dropping root for
 * nobody) could not remove its registry files at its end: they are in
 * root's registry (mode 0700).  While it still has root's rights, they
 * move beside it, to the new user's registry (the same parent directory,
 * hookit-UID: /dev/shm/hookit-65534 by default; made for that user, mode
 * 0700, when missing), where the process, as the new user, removes them at
 * its end.  They stay root's files, mode 0600: the new user can remove
 * them but not read them; root's readers find them through the file the
 * process maps (/proc/PID/maps).  Without the move (the directory is not
 * a registry of that user, another file system), the end marks the arena
 * ended instead (unregister_files). */
JP_NOINSTR void jp_arena_user_change(uid_t euid)
{
    if (!registered_pid || geteuid() != 0 || euid == 0)
        return;
    int saved = errno;
    char dir[REGISTRY_PATH_MAX], why[REGISTRY_PATH_MAX + 128];
    const char *slash = strrchr(registry, '/');
    snprintf(dir, sizeof dir, "%.*shookit-%u", slash ? (int)(slash - registry + 1) : 0, registry,
             (unsigned)euid);
    if (strcmp(dir, registry) != 0) {
        if (mkdir(dir, 0700) == 0 && chown(dir, euid, (gid_t)-1) != 0)
            rmdir(dir);
        if (registry_dir_check(dir, euid, why, sizeof why) != 0) {
            jp_host->debug_log("jprof: %s: the registry files stay in %s", why, registry);
        } else {
            char from[REGISTRY_PATH_MAX + 64], to[REGISTRY_PATH_MAX + 64];
            registry_file(from, sizeof from, registry, registered_pid, ".arena");
            registry_file(to, sizeof to, dir, registered_pid, ".arena");
            if (rename(from, to) != 0) {
                jp_host->debug_log("jprof: cannot move %s to %s: %s", from, to, strerror(errno));
            } else {
                registry_file(from, sizeof from, registry, registered_pid, ".maps");
                registry_file(to, sizeof to, dir, registered_pid, ".maps");
                rename(from, to);
                jp_host->debug_log("jprof: user %u: registry files moved to %s", (unsigned)euid, dir);
                snprintf(registry, sizeof registry, "%s", dir);
            }
        }
    }
    errno = saved;
}

JP_NOINSTR static int save_maps_again(void *ctx)
{
    (void)ctx;
    if (!registered_pid)
        return -1;
    save_maps();
    return 0;
}

/* A library was loaded: `hookit recover` needs the new maps, to name the
 * library's functions even if it is closed before the process dies.  A
 * library closed and opened again at the same place changes nothing the
 * copy holds: no copy then (a loop of dlopen/dlclose read the maps each
 * time). */
JP_NOINSTR void jp_arena_maps_changed(int settled)
{
    pthread_mutex_lock(&saved_lock);
    jp_loaded_refresh(&saved_set, settled, save_maps_again, NULL);
    pthread_mutex_unlock(&saved_lock);
}
