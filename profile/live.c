/* Live reading of a profiled process (live.h, docs/live.md).
 *
 * The arena is mapped read-only; a second, writable mapping of the same
 * file is made only to post a request (a command, a pause, a copy).
 * Every reference read from the arena is checked against the mapping, so
 * a torn or damaged arena gives a retry or an error, never a crash. */
#include "profile/live.h"
#include "common/clock.h"
#include "profile/arena_walk.h"
#include "profile/procinfo.h"
#include "profile/registry.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SEQ_TRIES 64                    /* torn copies before asking the thread */
#define SELF_COPY_WAIT_NS 1000000000ull /* how long to wait for a thread's own copy */
#define GATHER_MAX_NS 100000000ull      /* process pause: longest wait for threads to park */
#define RECOPY_ROUNDS 64                /* process pause: copies retaken until no thread moved */
#define MIN_RATE_NS 2000000ull          /* counter rate measured over at least this */

struct live {
    pid_t pid;
    int dead;
    char path[REGISTRY_PATH_MAX + 64];
    const char *base;                   /* read-only mapping */
    char *rw;                           /* writable mapping, made on demand */
    uint64_t size;
    dev_t dev;
    ino_t ino;
    struct arena_view view;
    char exe[4096];
    uint32_t seq_tries;                 /* torn copies before asking the thread */
};

/* Times this reader thread slept waiting for something (the process's
 * threads, the clock): a process pause counts those it contains
 * (live_snapshot.waits), which tells a pause that waited for a thread from
 * one the scheduler made long. */
static __thread uint32_t reader_waits;

static void nap_us(long us)
{
    struct timespec ts = { 0, us * 1000 };
    reader_waits++;
    nanosleep(&ts, NULL);
}

/* How long this thread has waited for a CPU while runnable, in ns
 * (/proc/thread-self/schedstat, second field); UINT64_MAX when the kernel
 * does not say (no CONFIG_SCHED_INFO). */
static uint64_t runnable_ns(void)
{
    char buf[96];
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return UINT64_MAX;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return UINT64_MAX;
    buf[n] = 0;
    unsigned long long run, wait;
    return sscanf(buf, "%llu %llu", &run, &wait) == 2 ? (uint64_t)wait : UINT64_MAX;
}

static const struct arena_header *header(const struct live *l)
{
    return (const struct arena_header *)l->base;
}

static const struct arena_process *process_block(const struct live *l)
{
    return (const struct arena_process *)(l->base + ARENA_SLOT);
}

/* The object at ref, size bytes, inside the mapping; NULL otherwise. */
static const void *at(const struct live *l, arena_ref ref, uint64_t size)
{
    uint64_t off = (uint64_t)ref * ARENA_SLOT;
    if (!ref || off + size > l->size || off + size < off)
        return NULL;
    return l->base + off;
}

/* The same object in the writable mapping (made on first use). */
static void *at_rw(struct live *l, const volatile void *ro)
{
    return l->rw ? l->rw + ((const volatile char *)ro - l->base) : NULL;
}

static int make_writable(struct live *l, char *err, size_t errlen)
{
    if (l->rw)
        return 0;
    int fd = open(l->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_dev != l->dev || st.st_ino != l->ino) {
        snprintf(err, errlen, "cannot open %s for writing: %s", l->path,
                 fd < 0 ? strerror(errno) : "the file was replaced");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    void *p = mmap(NULL, l->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "cannot map %s: %s", l->path, strerror(errno));
        return -1;
    }
    l->rw = p;
    return 0;
}

/* ---- attaching ----------------------------------------------------------------- */

static uid_t process_owner(pid_t pid, int *alive)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d", (int)pid);
    *alive = stat(path, &st) == 0;
    return *alive ? st.st_uid : geteuid();
}

static const char *user_name(uid_t uid, char *buf, size_t size)
{
    struct passwd *pw = getpwuid(uid);
    if (pw)
        snprintf(buf, size, "%s (uid %u)", pw->pw_name, (unsigned)uid);
    else
        snprintf(buf, size, "uid %u", (unsigned)uid);
    return buf;
}

/* A reader without HOOKIT_RUNTIME_DIR looks where the process registered:
 * its own HOOKIT_RUNTIME_DIR, from /proc/PID/environ (readable by its user
 * and root only, like the rest). */
static void follow_process_runtime_dir(pid_t pid)
{
    const char *mine = getenv("HOOKIT_RUNTIME_DIR");
    if (mine && *mine)
        return;
    char path[64], buf[65536];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return;
    buf[n] = 0;
    static const char key[] = "HOOKIT_RUNTIME_DIR=";
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
        if (!strncmp(buf + i, key, sizeof key - 1) && buf[i + sizeof key - 1])
            setenv("HOOKIT_RUNTIME_DIR", buf + i + sizeof key - 1, 1);
}

struct moved_find {
    pid_t pid;
    char *dir;
    size_t size;
};

static int moved_match(void *ctx, const char *dir, pid_t pid)
{
    struct moved_find *f = ctx;
    if (pid != f->pid)
        return 0;
    snprintf(f->dir, f->size, "%s", dir);
    return 1;
}

int live_registry_for(pid_t pid, char *dir, size_t size, char *err, size_t errlen)
{
    int alive;
    uid_t owner = process_owner(pid, &alive), me = geteuid();
    if (alive && owner != me && me != 0) {
        char who[128];
        snprintf(err, errlen, "process %d belongs to user %s: refused (only that user or root "
                 "may read or control it)", (int)pid, user_name(owner, who, sizeof who));
        return -1;
    }
    if (alive)
        follow_process_runtime_dir(pid);
    int rc = registry_dir(owner, 0, dir, size, err, errlen);
    /* A dead root process that had dropped root for another user left its
     * files where they moved, in that user's registry (still root's): root
     * finds them there when they are not in its own. */
    char path[REGISTRY_PATH_MAX + 32];
    struct stat st;
    registry_file(path, sizeof path, dir, pid, ".arena");
    if (!alive && me == 0 && lstat(path, &st) != 0) {
        struct moved_find f = { pid, dir, size };
        char mine[REGISTRY_PATH_MAX];
        snprintf(mine, sizeof mine, "%s", dir);
        if (registry_moved_each(mine, moved_match, &f))
            return 0;
        snprintf(dir, size, "%s", mine);
    }
    return rc;
}

static int check_file(struct live *l, int fd, uid_t owner, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s is not a regular file: refused", l->path);
        return -1;
    }
    /* root's file in the registry of the user a process became (it moved
     * there when the process dropped root: profiler/jprof/base/arena.c) */
    if ((st.st_uid != owner && st.st_uid != 0) || (st.st_mode & 077)) {
        snprintf(err, errlen, "%s has the wrong owner or mode (want the process's user, 0600): "
                 "refused", l->path);
        return -1;
    }
    if ((uint64_t)st.st_size < 2 * ARENA_SLOT) {
        snprintf(err, errlen, "%s is too short to be an arena", l->path);
        return -1;
    }
    l->size = (uint64_t)st.st_size;
    l->dev = st.st_dev;
    l->ino = st.st_ino;
    return 0;
}

static int check_arena(struct live *l, char *err, size_t errlen)
{
    const struct arena_header *h = header(l);
    if (!memcmp(h->magic, ARENA_MAGIC_ENDED, 8)) {
        snprintf(err, errlen, "process %d ended normally (its profile was written); %s is what it "
                 "could not remove", (int)l->pid, l->path);
        return -1;
    }
    if (memcmp(h->magic, ARENA_MAGIC, 8) || h->version < ARENA_VERSION_MIN || h->version > ARENA_VERSION
        || h->slot_size != ARENA_SLOT) {
        snprintf(err, errlen, "%s is not a hookit arena of this version", l->path);
        return -1;
    }
    if (h->pid != l->pid) {
        snprintf(err, errlen, "%s belongs to pid %d, not %d", l->path, h->pid, (int)l->pid);
        return -1;
    }
    uint64_t start = process_block(l)->proc_starttime;
    if (!l->dead && !registry_alive(l->pid, start)) {
        snprintf(err, errlen, "%s is left over from an earlier process %d (the pid was reused); "
                 "'hookit recover' handles it", l->path, (int)l->pid);
        return -1;
    }
    const char *exe = at(l, process_block(l)->exe, 1);
    snprintf(l->exe, sizeof l->exe, "%s", exe ? exe : "");
    l->exe[sizeof l->exe - 1] = 0;
    return 0;
}

static struct live *attach_in(pid_t pid, const char *dir, uid_t owner, char *err, size_t errlen);

/* A process that changed user (a server dropping root for nobody) keeps
 * its arena in the registry of the user who started it.  That user finds
 * it in its own registry, root also through the arena the process maps;
 * nobody else (the arena is that user's, mode 0600).  The arena's stored
 * start time must be the live process's. */
static struct live *attach_started_by_me(pid_t pid, char *err, size_t errlen)
{
    char dir[REGISTRY_PATH_MAX], path[REGISTRY_PATH_MAX + 32], why[256];
    uid_t me = geteuid();
    struct stat st;
    follow_process_runtime_dir(pid);
    if (registry_dir(me, 0, dir, sizeof dir, why, sizeof why) == 0) {
        registry_file(path, sizeof path, dir, pid, ".arena");
        if (lstat(path, &st) == 0) {
            struct live *l = attach_in(pid, dir, me, err, errlen);
            if (l && !l->dead)
                return l;
            live_detach(l);
        }
    }
    if (me != 0)
        return NULL;
    /* root: the registry file the process has mapped */
    char maps[64], line[REGISTRY_PATH_MAX + 256], want[32];
    snprintf(maps, sizeof maps, "/proc/%d/maps", (int)pid);
    snprintf(want, sizeof want, "/%d.arena", (int)pid);
    FILE *f = fopen(maps, "re");
    if (!f)
        return NULL;
    struct live *found = NULL;
    while (!found && fgets(line, sizeof line, f)) {
        char *slash = strchr(line, '/');
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n')
            line[--len] = 0;
        if (!slash || len < strlen(want) || strcmp(line + len - strlen(want), want))
            continue;
        line[len - strlen(want)] = 0;
        if (lstat(slash, &st) != 0 || registry_dir_check(slash, st.st_uid, why, sizeof why) != 0)
            continue;
        found = attach_in(pid, slash, st.st_uid, err, errlen);
        if (found && found->dead) {
            live_detach(found);
            found = NULL;
        }
    }
    fclose(f);
    return found;
}

struct live *live_attach(pid_t pid, int flags, char *err, size_t errlen)
{
    char dir[REGISTRY_PATH_MAX];
    int alive;
    uid_t owner = process_owner(pid, &alive);
    if (pid <= 0) {
        snprintf(err, errlen, "bad pid %d", (int)pid);
        return NULL;
    }
    if (!alive && !(flags & LIVE_DEAD_OK)) {
        snprintf(err, errlen, "no process %d", (int)pid);
        return NULL;
    }
    if (alive && owner != geteuid()) {
        char why[1024];
        struct live *l = attach_started_by_me(pid, why, sizeof why);
        if (l)
            return l;
    }
    if (live_registry_for(pid, dir, sizeof dir, err, errlen) != 0)
        return NULL;
    return attach_in(pid, dir, owner, err, errlen);
}

static struct live *attach_in(pid_t pid, const char *dir, uid_t owner, char *err, size_t errlen)
{
    struct live *l = calloc(1, sizeof *l);
    if (!l) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    l->pid = pid;
    /* HOOKIT_LIVE_TRIES: how many torn copies before a thread is asked
     * for its own (tests set 0 to exercise that path). */
    const char *tries = getenv("HOOKIT_LIVE_TRIES");
    l->seq_tries = tries && *tries ? (uint32_t)strtoul(tries, NULL, 10) : SEQ_TRIES;
    registry_file(l->path, sizeof l->path, dir, pid, ".arena");
    int fd = open(l->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            snprintf(err, errlen, "process %d is not profiled live: no %s (not started with "
                     "libjprof, collection files in anonymous memory, or already ended)",
                     (int)pid, l->path);
        else
            snprintf(err, errlen, "cannot open %s: %s", l->path, strerror(errno));
        free(l);
        return NULL;
    }
    int rc = check_file(l, fd, owner, err, errlen);
    void *p = rc == 0 ? mmap(NULL, l->size, PROT_READ, MAP_SHARED | MAP_NORESERVE, fd, 0) : MAP_FAILED;
    close(fd);
    if (rc == 0 && p == MAP_FAILED) {
        snprintf(err, errlen, "cannot map %s: %s", l->path, strerror(errno));
        rc = -1;
    }
    if (rc == 0) {
        l->base = p;
        l->view = (struct arena_view){ l->base, l->size };
        l->dead = !registry_alive(pid, process_block(l)->proc_starttime);
        rc = check_arena(l, err, errlen);
    }
    if (rc != 0) {
        live_detach(l);
        return NULL;
    }
    return l;
}

void live_detach(struct live *l)
{
    if (!l)
        return;
    if (l->base)
        munmap((void *)l->base, l->size);
    if (l->rw)
        munmap(l->rw, l->size);
    free(l);
}

int live_alive(const struct live *l)
{
    return !l->dead && registry_alive(l->pid, process_block(l)->proc_starttime);
}

pid_t live_pid(const struct live *l) { return l->pid; }
const char *live_exe(const struct live *l) { return l->exe; }
const char *live_arena_path(const struct live *l) { return l->path; }

int live_leftover_ended(pid_t pid, char *path, size_t size)
{
    char dir[REGISTRY_PATH_MAX], why[1024], magic[8];
    if (live_registry_for(pid, dir, sizeof dir, why, sizeof why) != 0)
        return 0;
    registry_file(path, size, dir, pid, ".arena");
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    int ended = fd >= 0 && pread(fd, magic, sizeof magic, 0) == (ssize_t)sizeof magic &&
                !memcmp(magic, ARENA_MAGIC_ENDED, 8);
    if (fd >= 0)
        close(fd);
    return ended;
}

/* ---- time -------------------------------------------------------------------- */

/* The process's clock now, and its rate, measured from the start pair it
 * stored (the CPU counter and CLOCK_MONOTONIC are machine-wide). */
static uint64_t process_now(const struct live *l, double *ticks_per_ns)
{
    const struct arena_process *pr = process_block(l);
    if (header(l)->clock != 0) {
        *ticks_per_ns = 1.0;
        return hk_mono_ns();
    }
    uint64_t mono, tsc;
    do {
        hk_clock_pair(&mono, &tsc);
        if (mono - pr->start_mono_ns < MIN_RATE_NS)
            nap_us(200);
    } while (mono - pr->start_mono_ns < MIN_RATE_NS);
    *ticks_per_ns = (double)(tsc - pr->start_tsc) / (double)(mono - pr->start_mono_ns);
    if (*ticks_per_ns <= 0)
        *ticks_per_ns = 1.0;
    return tsc;
}

/* ---- copying one thread -------------------------------------------------------- */

static const struct arena_thread *thread_rec(const struct live *l, arena_ref r)
{
    return at(l, r, sizeof(struct arena_thread));
}

static void take_fields(struct live_thread *t, const struct arena_thread *rec)
{
    t->tid = rec->tid;
    t->index = rec->index;
    t->state = rec->state;
    t->waiting = (__atomic_load_n(&rec->request, __ATOMIC_RELAXED) & ARENA_REQ_WAIT) != 0;
    memcpy(t->name, rec->name, 16);
    t->name[16] = 0;
    t->dropped = rec->dropped;
    t->unmatched = rec->unmatched;
}

/* One attempt under the thread's seq (profile/arena_walk.c): 1 done, 0
 * torn, -1 no memory/damaged.  A dead thread killed mid-update stays odd:
 * taken as it is. */
static int copy_under_seq(struct live *l, const struct arena_thread *rec, struct live_thread *t,
                          struct arena_thread_copy *c)
{
    unsigned flags = ARENA_COPY_FRAMES | ARENA_COPY_PENDING | (l->dead ? ARENA_COPY_ODD : 0);
    int rc = arena_copy_thread(&l->view, rec, flags, c);
    if (rc != 1)
        return rc;
    if (c->pending)
        t->dropped = t->unmatched = 0;
    t->nnodes = c->n;
    t->depth = c->depth;
    return 1;
}

/* The thread's own copy (ARENA_REQ_COPY), once copy_seq moved past seen. */
static int copy_from_self(struct live *l, const struct arena_thread *rec, uint32_t seen,
                          struct live_thread *t, struct arena_thread_copy *c)
{
    uint32_t s1 = __atomic_load_n(&rec->copy_seq, __ATOMIC_ACQUIRE);
    if ((s1 & 1) || s1 == seen)
        return 0;
    uint32_t n = rec->copy_nodes, depth = rec->copy_depth;
    uint64_t bytes = (uint64_t)n * sizeof(struct arena_copy_node) + ((uint64_t)depth + 1) * sizeof(struct arena_frame);
    const char *block = at(l, rec->copy_ref, bytes);
    if (!block || arena_thread_copy_reserve(c, n, depth) != 0)
        return -1;
    memcpy(c->nodes, block, (size_t)n * sizeof *c->nodes);
    memcpy(c->stack, block + (size_t)n * sizeof *c->nodes, ((size_t)depth + 1) * sizeof *c->stack);
    uint64_t taken = rec->copy_taken;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&rec->copy_seq, __ATOMIC_RELAXED) != s1)
        return 0;
    for (uint32_t i = 0; i < n; i++)        /* a copy in the arena is data: check it */
        if (c->nodes[i].parent != UINT32_MAX && c->nodes[i].parent >= i)
            return -1;
    t->nnodes = n;
    t->depth = depth;
    t->now = taken;
    return 1;
}

/* Copies under the seq, then the thread's own copy if it is always
 * mid-update.  0, or -1 with err. */
static int copy_into(struct live *l, const struct arena_thread *rec, struct live_thread *t,
                     struct arena_thread_copy *c, char *err, size_t errlen)
{
    take_fields(t, rec);
    if (arena_thread_copy_reserve(c, 256, 64) != 0)
        goto oom;
    int rc = 0;
    for (uint32_t i = 0; i < l->seq_tries && rc == 0; i++) {
        rc = copy_under_seq(l, rec, t, c);
        t->retries += rc == 0;
    }
    if (rc == 0 && !l->dead) {
        /* Always mid-update: ask the thread for its own copy, and keep
         * trying ourselves meanwhile (it may have gone quiet). */
        uint32_t seen = __atomic_load_n(&rec->copy_seq, __ATOMIC_ACQUIRE);
        if (make_writable(l, err, errlen) != 0)
            return -1;
        __atomic_fetch_or((uint32_t *)at_rw(l, &rec->request), ARENA_REQ_COPY, __ATOMIC_RELEASE);
        uint64_t deadline = hk_mono_ns() + SELF_COPY_WAIT_NS;
        while (rc == 0 && hk_mono_ns() < deadline) {
            rc = copy_from_self(l, rec, seen, t, c);
            if (rc == 1) {
                t->how = LIVE_COPY_SELF;
                return 0;
            }
            if (rc == 0 && (rc = copy_under_seq(l, rec, t, c)) == 0) {
                t->retries++;
                nap_us(100);
            }
        }
    }
    if (rc < 0)
        goto oom;
    if (rc == 0) {
        snprintf(err, errlen, "thread %d changed during every copy for %.1f s", t->tid,
                 SELF_COPY_WAIT_NS / 1e9);
        return -1;
    }
    return 0;
oom:
    snprintf(err, errlen, "cannot copy thread %d: out of memory or a damaged arena", t->tid);
    return -1;
}

/* The thread's copy into t, whose buffers it then owns (also on failure:
 * live_snapshot_free frees them). */
static int copy_thread(struct live *l, const struct arena_thread *rec, struct live_thread *t, char *err,
                       size_t errlen)
{
    struct arena_thread_copy c = { 0 };
    int rc = copy_into(l, rec, t, &c, err, errlen);
    t->nodes = c.nodes;
    t->stack = c.stack;
    return rc;
}

/* ---- snapshots ---------------------------------------------------------------------- */

/* The clock of the process now (process_now gave the rate). */
static uint64_t clock_now(const struct live *l)
{
    return header(l)->clock != 0 ? hk_mono_ns() : hk_counter();
}

/* A dead thread's last moment we can vouch for: its deepest open frame
 * was entered, and then ran at least its closed children's time beyond
 * what its own closed activations hold. */
static uint64_t last_alive(const struct live_thread *t)
{
    if (t->state != ARENA_THREAD_RUNNING || t->depth == 0)
        return 0;
    const struct arena_frame *f = &t->stack[t->depth];
    uint32_t idx = UINT32_MAX;
    for (uint32_t i = 0; i < t->nnodes && idx == UINT32_MAX; i++)
        if (t->nodes[i].ref == f->node)
            idx = i;
    uint64_t children = 0, own = idx != UINT32_MAX ? t->nodes[idx].incl : 0;
    for (uint32_t i = idx + 1; idx != UINT32_MAX && i < t->nnodes; i++)
        if (t->nodes[i].parent == idx)
            children += t->nodes[i].incl;
    return f->t0 + (children > own ? children - own : 0);
}

static int by_index(const void *a, const void *b)
{
    const struct live_thread *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

/* The thread records, newest first as listed; at most max. */
static uint32_t thread_list(const struct live *l, const struct arena_thread **recs, uint32_t max)
{
    uint32_t n = 0;
    arena_ref r = __atomic_load_n(&header(l)->first_thread, __ATOMIC_ACQUIRE);
    while (r && n < max) {
        const struct arena_thread *rec = thread_rec(l, r);
        if (!rec)
            break;
        recs[n++] = rec;
        r = rec->next;
    }
    return n;
}

#define MAX_THREADS 65536

static int pause_take(struct live *l, uint32_t *gen, char *err, size_t errlen)
{
    struct arena_process *pr = at_rw(l, process_block(l));
    uint64_t deadline = hk_mono_ns() + 2 * SELF_COPY_WAIT_NS;
    for (;;) {
        uint32_t g = __atomic_load_n(&pr->pause_gen, __ATOMIC_ACQUIRE);
        if (!(g & 1)) {
            if (__atomic_compare_exchange_n(&pr->pause_gen, &g, g + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                pr->pause_owner = getpid();
                *gen = g + 1;
                return 0;
            }
            continue;
        }
        pid_t owner = pr->pause_owner;
        if (owner > 0 && kill(owner, 0) != 0 && errno == ESRCH)   /* a reader died holding it */
            __atomic_compare_exchange_n(&pr->pause_gen, &g, g + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        if (hk_mono_ns() > deadline) {
            snprintf(err, errlen, "another reader keeps process %d paused", (int)l->pid);
            return -1;
        }
        nap_us(500);
    }
}

static void pause_release(struct live *l, uint32_t gen)
{
    struct arena_process *pr = at_rw(l, process_block(l));
    pr->pause_owner = 0;
    __atomic_store_n(&pr->pause_gen, gen + 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &pr->pause_gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Ask every running thread to park, and wait only for the threads inside
 * a hook (seq odd, not parked): they park at that hook's exit.  A thread
 * outside every hook (blocked in a system call, or running code without
 * hooks) cannot change its tree until it enters one, so it is not waited
 * for: its copy is checked afterwards instead (pause_copy).  At most
 * GATHER_MAX_NS. */
static void gather(struct live *l, const struct arena_thread **recs, uint32_t n, struct live_snapshot *s)
{
    for (uint32_t i = 0; i < n; i++)
        if (recs[i]->state == ARENA_THREAD_RUNNING)
            __atomic_fetch_or((uint32_t *)at_rw(l, &recs[i]->request), ARENA_REQ_PAUSE, __ATOMIC_RELEASE);
    uint64_t t0 = hk_mono_ns();
    const struct arena_process *pr = process_block(l);
    for (;;) {
        uint32_t parked = 0, quiet = 0, busy = 0;
        uint32_t parked_word = __atomic_load_n(&pr->parked, __ATOMIC_ACQUIRE);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t seq = __atomic_load_n(&recs[i]->seq, __ATOMIC_ACQUIRE);
            if (__atomic_load_n(&recs[i]->parked, __ATOMIC_ACQUIRE))
                parked++;
            else if (recs[i]->state != ARENA_THREAD_RUNNING || !(seq & 1))
                quiet++;
            else
                busy++;
        }
        s->parked = parked;
        s->quiet = quiet;
        if (!busy || hk_mono_ns() - t0 >= GATHER_MAX_NS)
            break;
        /* Until a thread parks (it wakes us), 50 us at most: a thread in a
         * hook is microseconds from its exit unless it lost its core. */
        struct timespec ts = { 0, 50000 };
        reader_waits++;
        syscall(SYS_futex, &pr->parked, FUTEX_WAIT, parked_word, &ts, NULL, 0);
    }
    s->gather_ns = hk_mono_ns() - t0;
}

/* Copy every thread so that all copies hold at one moment: a thread's copy
 * is taken again until its seq did not move between the first copy's
 * start and the last copy's end (a parked thread never moves; one outside
 * the hooks rarely does, and parks at its next hook exit when it does).
 * Then, at every moment of that interval, each thread was in the state
 * copied. */
static int pause_copy(struct live *l, const struct arena_thread **recs, uint32_t n,
                      struct live_snapshot *s, char *err, size_t errlen)
{
    uint32_t *before = calloc(n + 1, sizeof *before);
    if (!before) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        before[i] = UINT32_MAX;         /* not copied yet */
    int rc = 0;
    for (uint32_t round = 0; round < RECOPY_ROUNDS && rc == 0; round++) {
        int moved = 0;
        for (uint32_t i = 0; i < n && rc == 0; i++) {
            uint32_t seq = __atomic_load_n(&recs[i]->seq, __ATOMIC_ACQUIRE);
            if (seq == before[i])
                continue;
            if (before[i] != UINT32_MAX) {
                free(s->threads[i].nodes);
                free(s->threads[i].stack);
                memset(&s->threads[i], 0, sizeof s->threads[i]);
                s->recopied++;
            }
            before[i] = seq;
            rc = copy_thread(l, recs[i], &s->threads[i], err, errlen);
            if (rc == 0 && s->threads[i].how != LIVE_COPY_SELF)
                s->threads[i].now = clock_now(l);
            moved = 1;
        }
        if (!moved)
            break;
        /* Check them all again: who moved since its copy? */
        for (uint32_t i = 0; i < n && rc == 0; i++)
            if (__atomic_load_n(&recs[i]->seq, __ATOMIC_ACQUIRE) != before[i])
                moved = 2;
        if (moved != 2)
            break;
        nap_us(20);                     /* let the movers reach their park */
    }
    free(before);
    return rc;
}

int live_snapshot(struct live *l, enum live_consistency c, struct live_snapshot *s,
                  char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->consistency = c;
    const struct arena_thread **recs = malloc(MAX_THREADS * sizeof *recs);
    if (!recs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint32_t n = thread_list(l, recs, MAX_THREADS);
    s->threads = calloc(n + 1, sizeof *s->threads);
    if (!s->threads) {
        free(recs);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint32_t gen = 0, waits0 = 0;
    uint64_t t_post = 0, runnable0 = UINT64_MAX;
    int paused = 0;
    if (c == LIVE_PROCESS && !l->dead) {
        if (make_writable(l, err, errlen) != 0 || pause_take(l, &gen, err, errlen) != 0) {
            free(recs);
            return -1;
        }
        paused = 1;
        runnable0 = runnable_ns();
        waits0 = reader_waits;
        t_post = hk_mono_ns();
        gather(l, recs, n, s);
    }
    s->now = process_now(l, &s->ticks_per_ns);
    int rc = 0;
    uint64_t t_copy = hk_mono_ns();
    if (paused) {
        rc = pause_copy(l, recs, n, s, err, errlen);
        for (uint32_t i = 0; i < n && rc == 0; i++) {
            struct live_thread *t = &s->threads[i];
            if (t->now > s->now)
                s->now = t->now;
            if (t->how == LIVE_COPY_SEQ && __atomic_load_n(&recs[i]->parked, __ATOMIC_ACQUIRE))
                t->how = LIVE_COPY_PARKED;
            s->nthreads = i + 1;
        }
        if (rc != 0)
            s->nthreads = n;
    }
    for (uint32_t i = 0; i < n && rc == 0 && !paused; i++) {
        struct live_thread *t = &s->threads[i];
        int was_parked = __atomic_load_n(&recs[i]->parked, __ATOMIC_ACQUIRE);
        rc = copy_thread(l, recs[i], t, err, errlen);
        /* The clock read after the copy: every activation in it closed
         * before, so open frames cover their closed children. */
        if (rc == 0 && t->how != LIVE_COPY_SELF)
            t->now = clock_now(l);
        if (rc == 0 && t->now > s->now)
            s->now = t->now;
        if (rc == 0 && was_parked && t->how == LIVE_COPY_SEQ)
            t->how = LIVE_COPY_PARKED;
        if (l->dead)
            t->how = LIVE_COPY_DEAD;
        s->nthreads = i + 1;
    }
    if (paused) {
        pause_release(l, gen);
        s->pause_ns = hk_mono_ns() - t_post;
        s->copy_ns = hk_mono_ns() - t_copy;
        s->waits = reader_waits - waits0;
        uint64_t runnable1 = runnable0 != UINT64_MAX ? runnable_ns() : UINT64_MAX;
        s->runnable_ns =
            runnable1 != UINT64_MAX && runnable1 >= runnable0 ? runnable1 - runnable0 : UINT64_MAX;
    }
    s->mono_ns = hk_mono_ns();
    free(recs);
    if (rc != 0) {
        live_snapshot_free(s);
        return -1;
    }
    if (l->dead) {
        /* No clock runs in a dead process: open frames count up to the
         * last moment we know it was alive, its newest frame entry. */
        uint64_t last = 0;
        for (uint32_t i = 0; i < s->nthreads; i++) {
            uint64_t t = last_alive(&s->threads[i]);
            if (t > last)
                last = t;
        }
        s->now = last;
        for (uint32_t i = 0; i < s->nthreads; i++)
            s->threads[i].now = last;
    }
    qsort(s->threads, s->nthreads, sizeof *s->threads, by_index);
    return 0;
}

void live_snapshot_free(struct live_snapshot *s)
{
    for (uint32_t i = 0; s->threads && i < s->nthreads; i++) {
        free(s->threads[i].nodes);
        free(s->threads[i].stack);
    }
    free(s->threads);
    memset(s, 0, sizeof *s);
}

/* ---- a snapshot as a profile ----------------------------------------------------------- */

static int fill_process(struct live *l, const struct live_snapshot *s, struct profile *p, const char *end)
{
    const struct arena_process *pr = process_block(l);
    p->process.pid = l->pid;
    p->process.ppid = 0;
    if (!l->dead) {
        char path[64], stat[512];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)l->pid);
        FILE *f = fopen(path, "re");
        if (f && fgets(stat, sizeof stat, f)) {
            char *close_paren = strrchr(stat, ')');
            int ppid;
            if (close_paren && sscanf(close_paren + 1, " %*c %d", &ppid) == 1)
                p->process.ppid = ppid;
        }
        if (f)
            fclose(f);
    }
    p->process.exe = profile_intern(p, l->exe);
    const char *args = at(l, pr->argv, (uint64_t)pr->argv_len + 1);
    uint32_t len = args ? pr->argv_len : 0, argc = 0;
    for (uint32_t i = 0; i < len; i += (uint32_t)strnlen(args + i, len - i) + 1)
        argc++;
    p->process.argv = profile_alloc(p, ((size_t)argc + 1) * sizeof *p->process.argv);
    if (!p->process.exe || !p->process.argv)
        return -1;
    for (uint32_t i = 0, k = 0; i < len && k < argc; i += (uint32_t)strnlen(args + i, len - i) + 1) {
        char *one = strndup(args + i, len - i);
        p->process.argv[k++] = one ? profile_intern(p, one) : NULL;
        free(one);
        if (!p->process.argv[k - 1])
            return -1;
        p->process.argc = k;
    }
    p->process.start_ns = pr->start_wall_ns;
    uint64_t start_ticks = header(l)->clock ? pr->start_mono_ns : pr->start_tsc;
    p->process.duration_ns = s->now > start_ticks ? arena_ticks_to_ns(s->now - start_ticks, s->ticks_per_ns) : 0;
    struct procinfo_meta m = {
        .profiler = "jprof",
        .clock = header(l)->clock ? "monotonic" : HK_COUNTER_NAME,
        .ticks_per_ns = s->ticks_per_ns,
        .end = end,
    };
    int rc = procinfo_set_meta(p, &m);
    rc |= profile_set_meta(p, "live_consistency", l->dead ? "dead" :
                           s->consistency == LIVE_PROCESS ? "process" : "thread");
    if (s->consistency == LIVE_PROCESS && !l->dead) {
        rc |= procinfo_set_meta_u64(p, "live_pause_ns", s->pause_ns);
        rc |= procinfo_set_meta_u64(p, "live_gather_ns", s->gather_ns);
        rc |= procinfo_set_meta_u64(p, "live_threads_parked", s->parked);
        rc |= procinfo_set_meta_u64(p, "live_threads_quiet", s->quiet);
        rc |= procinfo_set_meta_u64(p, "live_copy_ns", s->copy_ns);
        rc |= procinfo_set_meta_u64(p, "live_threads_recopied", s->recopied);
        rc |= procinfo_set_meta_u64(p, "live_pause_waits", s->waits);
        if (s->runnable_ns != UINT64_MAX)
            rc |= procinfo_set_meta_u64(p, "live_pause_runnable_ns", s->runnable_ns);
    }
    uint64_t dropped = 0, unmatched = 0, self = 0;
    for (uint32_t i = 0; i < s->nthreads; i++) {
        dropped += s->threads[i].dropped;
        unmatched += s->threads[i].unmatched;
        self += s->threads[i].how == LIVE_COPY_SELF;
    }
    rc |= procinfo_set_meta_u64(p, "live_threads_self_copied", self);
    rc |= procinfo_set_meta_u64(p, "dropped_events", dropped);
    rc |= procinfo_set_meta_u64(p, "unmatched_exits", unmatched);
    if (header(l)->version >= 2)
        rc |= arena_control_log_meta(p, at(l, ARENA_CONTROL_LOG_REF, sizeof(struct arena_control_log)),
                                     pr->start_mono_ns);
    return rc ? -1 : 0;
}

struct profile *live_profile(struct live *l, const struct live_snapshot *s, const char *end)
{
    struct profile *p = profile_new();
    struct arena_funcs funcs;
    if (!p)
        return NULL;
    int rc = arena_funcs_init(&funcs);
    if (rc == 0)
        rc = fill_process(l, s, p, end);
    p->threads = rc == 0 ? profile_alloc(p, ((size_t)s->nthreads + 1) * sizeof *p->threads) : NULL;
    if (!p->threads)
        rc = -1;
    for (uint32_t i = 0; rc == 0 && i < s->nthreads; i++) {
        const struct live_thread *t = &s->threads[i];
        struct prof_thread *th = &p->threads[i];
        th->tid = t->tid;
        th->index = t->index;
        th->name = profile_intern(p, t->name);
        uint32_t depth = t->state == ARENA_THREAD_RUNNING ? t->depth : 0;
        struct arena_timing tm = {
            .ticks_per_ns = s->ticks_per_ns,
            .sample_period_ns = (uint64_t)process_block(l)->sample_us * 1000u,
            .open_waits = 1,
        };
        rc = arena_copy_to_thread(p, &funcs, t->nodes, t->nnodes, t->stack, depth, t->now, &tm, th);
        p->nthreads = i + 1;
    }
    if (rc == 0)
        rc = arena_funcs_to_profile(&funcs, p);
    arena_funcs_free(&funcs);
    if (rc != 0) {
        profile_free(p);
        return NULL;
    }
    return p;
}

/* ---- commands ------------------------------------------------------------------------- */

int live_command(struct live *l, uint32_t cmd, int timeout_ms, uint32_t *result,
                 char *err, size_t errlen)
{
    if (l->dead) {
        snprintf(err, errlen, "process %d has ended", (int)l->pid);
        return -1;
    }
    if (make_writable(l, err, errlen) != 0)
        return -1;
    struct arena_header *h = at_rw(l, header(l));
    uint64_t deadline = hk_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
    uint32_t none = ARENA_CMD_NONE;
    while (!__atomic_compare_exchange_n(&h->control, &none, cmd, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        none = ARENA_CMD_NONE;
        if (hk_mono_ns() > deadline) {
            snprintf(err, errlen, "process %d: an earlier command is still waiting for one of its "
                     "threads to run a hook", (int)l->pid);
            return -1;
        }
        nap_us(500);
    }
    uint32_t seq = __atomic_load_n(&h->control_seq, __ATOMIC_ACQUIRE) + 1;
    __atomic_store_n(&h->control_seq, seq, __ATOMIC_RELEASE);
    __atomic_store_n(&h->attention, 1, __ATOMIC_RELEASE);
    /* The process's control thread waits on the word (profiler/jprof/live/agent.c). */
    syscall(SYS_futex, &h->attention, FUTEX_WAKE, 1, NULL, NULL, 0);
    const struct arena_thread **recs = malloc(MAX_THREADS * sizeof *recs);
    uint32_t n = recs ? thread_list(l, recs, MAX_THREADS) : 0;
    for (uint32_t i = 0; i < n; i++)
        if (recs[i]->state == ARENA_THREAD_RUNNING)
            __atomic_fetch_or((uint32_t *)at_rw(l, &recs[i]->request), ARENA_REQ_CONTROL, __ATOMIC_RELEASE);
    free(recs);
    for (;;) {
        if (__atomic_load_n(&h->control_done, __ATOMIC_ACQUIRE) == seq) {
            *result = h->control_result;
            return 0;
        }
        if (!live_alive(l)) {
            snprintf(err, errlen, "process %d ended before carrying out the command", (int)l->pid);
            return -1;
        }
        if (hk_mono_ns() > deadline) {
            uint32_t one = 1;
            if (__atomic_compare_exchange_n(&h->attention, &one, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                __atomic_store_n(&h->control, ARENA_CMD_NONE, __ATOMIC_RELEASE);
                snprintf(err, errlen, "process %d: no thread ran an instrumented function within "
                         "%d ms, command withdrawn (a process is only reached through its hooks; "
                         "a single-threaded one that blocks, when started with JPROFOPTS=control)",
                         (int)l->pid, timeout_ms);
                return -1;
            }
            deadline += 1000000000ull;      /* claimed: it is being carried out */
        }
        nap_us(200);
    }
}

struct pid_list {
    pid_t *pids;
    int n, cap;
};

static int pid_list_add(void *ctx, const char *dir, pid_t pid)
{
    (void)dir;
    struct pid_list *l = ctx;
    for (int i = 0; i < l->n; i++)
        if (l->pids[i] == pid)
            return 0;
    if (l->n == l->cap) {
        pid_t *bigger = realloc(l->pids, (size_t)(l->cap * 2) * sizeof *bigger);
        if (!bigger)
            return 1;
        l->pids = bigger;
        l->cap *= 2;
    }
    l->pids[l->n++] = pid;
    return 0;
}

int live_list(uid_t uid, pid_t **pids, char *err, size_t errlen)
{
    char dir[REGISTRY_PATH_MAX];
    if (registry_dir(uid, 0, dir, sizeof dir, err, errlen) != 0)
        return -1;
    struct pid_list l = { malloc(16 * sizeof(pid_t)), 0, 16 };
    DIR *d = opendir(dir);
    if (!d || !l.pids) {
        snprintf(err, errlen, "cannot list %s: %s", dir, strerror(errno));
        free(l.pids);
        if (d)
            closedir(d);
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (pid <= 0 || strcmp(end, ".arena") != 0 || e->d_name[0] == '.')
            continue;
        if (pid_list_add(&l, dir, (pid_t)pid) != 0)
            break;
    }
    closedir(d);
    /* root: also its processes' files that moved to other users'
     * registries when those processes dropped root (live_registry_for) */
    if (uid == 0 && geteuid() == 0)
        registry_moved_each(dir, pid_list_add, &l);
    *pids = l.pids;
    return l.n;
}
