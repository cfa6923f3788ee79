/* Live reading of a profiled process (live.h, docs/live.md).
 *
 * The arena is mapped read-only; a second, writable mapping of the same
 * file is made only to post a request (a command, a pause, a copy).
 * Every reference read from the arena is checked against the mapping, so
 * a torn or damaged arena gives a retry or an error, never a crash. */
#include "profile/live.h"
#include "profile/live_waits.h"
#include "profile/live_internal.h"
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
#define MIN_RATE_NS 2000000ull          /* counter rate measured over at least this */

__thread uint32_t live_reader_waits;

void live_nap_us(long us)
{
    struct timespec ts = { 0, us * 1000 };
    live_reader_waits++;
    nanosleep(&ts, NULL);
}

int live_make_writable(struct live *l, char *err, size_t errlen)
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
    char buf[65536];
    ssize_t n = procinfo_read(pid, "environ", buf, sizeof buf);
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
    const struct arena_header *h = live_header(l);
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
    uint64_t start = live_process_block(l)->proc_starttime;
    if (!l->dead && !registry_alive(l->pid, start)) {
        snprintf(err, errlen, "%s is left over from an earlier process %d (the pid was reused); "
                 "'hookit recover' handles it", l->path, (int)l->pid);
        return -1;
    }
    const char *exe = live_at(l, live_process_block(l)->exe, 1);
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
        l->dead = !registry_alive(pid, live_process_block(l)->proc_starttime);
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
    return !l->dead && registry_alive(l->pid, live_process_block(l)->proc_starttime);
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
uint64_t live_process_now(const struct live *l, double *ticks_per_ns)
{
    const struct arena_process *pr = live_process_block(l);
    if (live_header(l)->clock != 0) {
        *ticks_per_ns = 1.0;
        return hk_mono_ns();
    }
    uint64_t mono, tsc;
    do {
        hk_clock_pair(&mono, &tsc);
        if (mono - pr->start_mono_ns < MIN_RATE_NS)
            live_nap_us(200);
    } while (mono - pr->start_mono_ns < MIN_RATE_NS);
    *ticks_per_ns = (double)(tsc - pr->start_tsc) / (double)(mono - pr->start_mono_ns);
    if (*ticks_per_ns <= 0)
        *ticks_per_ns = 1.0;
    return tsc;
}

/* ---- copying one thread -------------------------------------------------------- */

static const struct arena_thread *thread_rec(const struct live *l, arena_ref r)
{
    return live_at(l, r, sizeof(struct arena_thread));
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
    t->pending = c->pending;
    t->pending_at = c->pending_at;
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
    const char *block = live_at(l, rec->copy_ref, bytes);
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
        if (live_make_writable(l, err, errlen) != 0)
            return -1;
        __atomic_fetch_or((uint32_t *)live_at_rw(l, &rec->request), ARENA_REQ_COPY, __ATOMIC_RELEASE);
        uint64_t deadline = hk_mono_ns() + SELF_COPY_WAIT_NS;
        while (rc == 0 && hk_mono_ns() < deadline) {
            rc = copy_from_self(l, rec, seen, t, c);
            if (rc == 1) {
                t->how = LIVE_COPY_SELF;
                return 0;
            }
            if (rc == 0 && (rc = copy_under_seq(l, rec, t, c)) == 0) {
                t->retries++;
                live_nap_us(100);
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
int live_copy_thread(struct live *l, const struct arena_thread *rec, struct live_thread *t, char *err,
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
uint64_t live_clock_now(const struct live *l)
{
    return live_header(l)->clock != 0 ? hk_mono_ns() : hk_counter();
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
uint32_t live_thread_list(const struct live *l, const struct arena_thread **recs, uint32_t max)
{
    uint32_t n = 0;
    arena_ref r = __atomic_load_n(&live_header(l)->first_thread, __ATOMIC_ACQUIRE);
    while (r && n < max) {
        const struct arena_thread *rec = thread_rec(l, r);
        if (!rec)
            break;
        recs[n++] = rec;
        r = rec->next;
    }
    return n;
}

/* A snapshot's first steps: the thread list and room for the copies. */
static int prepare(struct live *l, enum live_consistency c, struct live_snapshot *s,
                   const struct arena_thread ***recs, uint32_t *n, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->consistency = c;
    *recs = malloc(LIVE_MAX_THREADS * sizeof **recs);
    *n = *recs ? live_thread_list(l, *recs, LIVE_MAX_THREADS) : 0;
    s->threads = *recs ? calloc(*n + 1, sizeof *s->threads) : NULL;
    if (!s->threads) {
        free(*recs);
        *recs = NULL;
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* Its last steps: a dead process's clock, the threads in index order. */
static void finish(const struct live *l, struct live_snapshot *s)
{
    s->mono_ns = hk_mono_ns();
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
}

/* Thread consistency: each thread copied whole, one after the other. */
static int thread_by_thread(struct live *l, const struct arena_thread **recs, uint32_t n,
                            struct live_snapshot *s, char *err, size_t errlen)
{
    s->now = live_process_now(l, &s->ticks_per_ns);
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        struct live_thread *t = &s->threads[i];
        int was_parked = __atomic_load_n(&recs[i]->parked, __ATOMIC_ACQUIRE);
        rc = live_copy_thread(l, recs[i], t, err, errlen);
        /* The clock read after the copy: every activation in it closed
         * before, so open frames cover their closed children. */
        if (rc == 0 && t->how != LIVE_COPY_SELF)
            t->now = live_clock_now(l);
        if (rc == 0 && t->now > s->now)
            s->now = t->now;
        if (rc == 0 && was_parked && t->how == LIVE_COPY_SEQ)
            t->how = LIVE_COPY_PARKED;
        if (l->dead)
            t->how = LIVE_COPY_DEAD;
        s->nthreads = i + 1;
    }
    return rc;
}

/* The processes ls[0 .. n) paused at once (live_pause.c), each snapshot
 * consistency c (LIVE_PROCESS for one, LIVE_JOB for a set). */
static int paused(struct live **ls, uint32_t n, enum live_consistency c, struct live_snapshot *snaps,
                  const struct live_sync *sync, char *err, size_t errlen)
{
    const struct arena_thread ***recs = calloc(n + 1, sizeof *recs);
    uint32_t *nrecs = calloc(n + 1, sizeof *nrecs), ready = 0;
    int rc = recs && nrecs ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "out of memory");
    for (; ready < n && rc == 0; ready++)
        rc = prepare(ls[ready], c, &snaps[ready], &recs[ready], &nrecs[ready], err, errlen);
    if (rc == 0)
        rc = live_pause_snapshots(ls, recs, nrecs, n, snaps, sync, err, errlen);
    for (uint32_t i = 0; i < n; i++) {
        if (rc == 0)
            finish(ls[i], &snaps[i]);
        else if (i < ready)
            live_snapshot_free(&snaps[i]);
        if (recs)
            free(recs[i]);
    }
    free(recs);
    free(nrecs);
    return rc;
}

int live_snapshot(struct live *l, enum live_consistency c, struct live_snapshot *s, char *err, size_t errlen)
{
    if (c != LIVE_THREAD && !l->dead)
        return paused(&l, 1, c, s, NULL, err, errlen);
    const struct arena_thread **recs;
    uint32_t n;
    if (prepare(l, c, s, &recs, &n, err, errlen) != 0)
        return -1;
    int rc = thread_by_thread(l, recs, n, s, err, errlen);
    free(recs);
    if (rc != 0) {
        live_snapshot_free(s);
        return -1;
    }
    finish(l, s);
    return 0;
}

static int snapshot_set(struct live **ls, uint32_t n, enum live_consistency c, struct live_snapshot *snaps,
                        struct live_set_pause *sp, const struct live_sync *sync, char *err, size_t errlen)
{
    memset(sp, 0, sizeof *sp);
    uint64_t t0 = hk_mono_ns();
    int rc = 0;
    uint32_t done = 0;
    if (c == LIVE_JOB) {
        rc = paused(ls, n, c, snaps, sync, err, errlen);
        done = rc == 0 ? n : 0;
    } else {
        /* thread, or process: each process consistent on its own, one
         * after the other (TAU's radial sweep) */
        for (; done < n && rc == 0; done++)
            rc = live_snapshot(ls[done], c, &snaps[done], err, errlen);
        if (rc != 0)
            done--;
    }
    if (rc != 0) {
        for (uint32_t i = 0; i < done; i++)
            live_snapshot_free(&snaps[i]);
        return -1;
    }
    sp->wall_ns = hk_mono_ns() - t0;
    for (uint32_t i = 0; i < n; i++) {
        const struct live_snapshot *s = &snaps[i];
        sp->pause_sum_ns += s->pause_ns;
        if (s->pause_ns >= sp->pause_max_ns) {
            sp->pause_max_ns = s->pause_ns;
            sp->pause_max_pid = live_pid(ls[i]);
        }
        sp->threads += s->nthreads;
    }
    /* job: every process paused over one interval, from the first request
     * to the last release (live_pause.c sets it in each snapshot) */
    sp->pause_ns = c == LIVE_JOB && n ? snaps[0].set_pause_ns : sp->pause_sum_ns;
    sp->copy_ns = c == LIVE_JOB && n ? snaps[0].copy_ns : 0;
    for (uint32_t i = 0; c != LIVE_JOB && i < n; i++)
        sp->copy_ns += snaps[i].copy_ns;
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
    const struct arena_process *pr = live_process_block(l);
    p->process.pid = l->pid;
    p->process.ppid = 0;
    if (!l->dead)
        p->process.ppid = procinfo_parent(l->pid, NULL, 0);
    p->process.exe = profile_intern(p, l->exe);
    const char *args = live_at(l, pr->argv, (uint64_t)pr->argv_len + 1);
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
    uint64_t start_ticks = live_header(l)->clock ? pr->start_mono_ns : pr->start_tsc;
    p->process.duration_ns = s->now > start_ticks ? arena_ticks_to_ns(s->now - start_ticks, s->ticks_per_ns) : 0;
    struct procinfo_meta m = {
        .profiler = "jprof",
        .clock = live_header(l)->clock ? "monotonic" : HK_COUNTER_NAME,
        .ticks_per_ns = s->ticks_per_ns,
        .end = end,
    };
    int rc = procinfo_set_meta(p, &m);
    static const char *const level[] = { "thread", "process", "job" };
    rc |= profile_set_meta(p, "live_consistency", l->dead ? "dead" : level[s->consistency]);
    struct live_job job;
    if (live_job_of(l, &job)) {
        p->process.rank = job.rank;
        p->process.size = job.size;
        rc |= profile_set_meta(p, "mpi_job_id", job.id);
    }
    if (s->consistency == LIVE_JOB && !l->dead) {
        rc |= procinfo_set_meta_u64(p, "live_set_pause_ns", s->set_pause_ns);
        rc |= procinfo_set_meta_u64(p, "live_set_processes", s->set_processes);
    }
    if (s->consistency != LIVE_THREAD && !l->dead) {
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
    if (live_header(l)->version >= 2)
        rc |= arena_control_log_meta(p, live_at(l, ARENA_CONTROL_LOG_REF, sizeof(struct arena_control_log)),
                                     pr->start_mono_ns);
    return rc ? -1 : 0;
}

/* The frames that are not machine code (MPI calls, Java methods), named
 * from the arena's list (profile/arena.h, struct arena_frame_name); the
 * caller names the others. */
static int name_frames(const struct live *l, struct profile *p)
{
    const struct arena_more *more = live_at(l, ARENA_MORE_REF, sizeof *more);
    arena_ref r = more ? __atomic_load_n(&more->frame_names, __ATOMIC_ACQUIRE) : 0;
    for (uint32_t guard = 0; r && guard < 1u << 20; guard++) {
        const struct arena_frame_name *f = live_at(l, r, sizeof *f);
        if (!f)
            break;
        uint64_t bytes = sizeof *f + (uint64_t)f->name_len + f->module_len + 2;
        if (!live_at(l, r, bytes) || f->text[f->name_len] || f->text[f->name_len + 1 + f->module_len])
            break; /* damaged: the rest stays unnamed */
        for (uint32_t i = 0; i < p->nfuncs; i++)
            if (p->funcs[i].addr == f->key && !p->funcs[i].name
                && profile_name_func(p, &p->funcs[i], f->text, f->text + f->name_len + 1, NULL, 0) != 0)
                return -1;
        r = __atomic_load_n(&f->next, __ATOMIC_ACQUIRE);
    }
    return 0;
}

struct profile *live_profile(struct live *l, const struct live_snapshot *s, const char *end)
{
    struct profile *p = profile_new();
    struct arena_funcs funcs;
    if (!p)
        return NULL;
    int rc = arena_funcs_init(&funcs);
    /* wait times: their clock, in slot 2 (live_waits.h) */
    const char *slot2 = live_header(l)->version >= 2 ? live_at(l, ARENA_CONTROL_LOG_REF, ARENA_SLOT) : NULL;
    const struct arena_waits *waits = slot2
        ? (const struct arena_waits *)(slot2 + (ARENA_WAITS_OFFSET - ARENA_CONTROL_LOG_REF * ARENA_SLOT))
        : NULL;
    double wait_rate = live_wait_rate(waits, live_process_block(l), live_header(l)->clock == 0, s->ticks_per_ns);
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
            .sample_period_ns = (uint64_t)live_process_block(l)->sample_us * 1000u,
            /* sampled: the wait column has a call in progress, else the frame's start */
            .open_waits = wait_rate == 0,
        };
        rc = arena_copy_to_thread(p, &funcs, t->nodes, t->nnodes, t->stack, depth, t->now, &tm, th);
        p->nthreads = i + 1;
        if (rc == 0)
            rc = live_wait_columns(&l->view, waits, wait_rate, tm.sample_period_ns != 0, s, t, p, th);
        rc = rc < 0 ? -1 : 0;
        if (rc == 0 && tm.sample_period_ns) /* as libjprof's own profile: CPU samples plus waits */
            rc = arena_sampled_times(p, th, t->nodes);
        if (rc == 0)
            rc = arena_inlined_column(p, th, &l->view, t->nodes, t->nnodes);
    }
    if (rc == 0)
        rc = arena_funcs_to_profile(&funcs, p);
    if (rc == 0)
        rc = name_frames(l, p);
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
    if (live_make_writable(l, err, errlen) != 0)
        return -1;
    struct arena_header *h = live_at_rw(l, live_header(l));
    uint64_t deadline = hk_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
    uint32_t none = ARENA_CMD_NONE;
    while (!__atomic_compare_exchange_n(&h->control, &none, cmd, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        none = ARENA_CMD_NONE;
        if (hk_mono_ns() > deadline) {
            snprintf(err, errlen, "process %d: an earlier command is still waiting for one of its "
                     "threads to run a hook", (int)l->pid);
            return -1;
        }
        live_nap_us(500);
    }
    uint32_t seq = __atomic_load_n(&h->control_seq, __ATOMIC_ACQUIRE) + 1;
    __atomic_store_n(&h->control_seq, seq, __ATOMIC_RELEASE);
    __atomic_store_n(&h->attention, 1, __ATOMIC_RELEASE);
    /* The process's control thread waits on the word (profiler/jprof/live/agent.c). */
    syscall(SYS_futex, &h->attention, FUTEX_WAKE, 1, NULL, NULL, 0);
    const struct arena_thread **recs = malloc(LIVE_MAX_THREADS * sizeof *recs);
    uint32_t n = recs ? live_thread_list(l, recs, LIVE_MAX_THREADS) : 0;
    for (uint32_t i = 0; i < n; i++)
        if (recs[i]->state == ARENA_THREAD_RUNNING)
            __atomic_fetch_or((uint32_t *)live_at_rw(l, &recs[i]->request), ARENA_REQ_CONTROL,
                              __ATOMIC_RELEASE);
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
                snprintf(err, errlen,
                         "process %d: no thread ran an instrumented function within "
                         "%d ms, command withdrawn (a process is only reached through its hooks; "
                         "a single-threaded one that blocks, when started with JPROFOPTS=control)",
                         (int)l->pid, timeout_ms);
                return -1;
            }
            deadline += 1000000000ull;      /* claimed: it is being carried out */
        }
        live_nap_us(200);
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

int live_snapshot_set(struct live **ls, uint32_t n, enum live_consistency c, struct live_snapshot *snaps,
                      struct live_set_pause *sp, char *err, size_t errlen)
{
    return snapshot_set(ls, n, c, snaps, sp, NULL, err, errlen);
}

int live_snapshot_set_sync(struct live **ls, uint32_t n, struct live_snapshot *snaps,
                           struct live_set_pause *sp, const struct live_sync *sync, char *err, size_t errlen)
{
    return snapshot_set(ls, n, LIVE_JOB, snaps, sp, sync, err, errlen);
}

int live_job_of(const struct live *l, struct live_job *j)
{
    const struct arena_more *more = live_at(l, ARENA_MORE_REF, sizeof *more);
    const struct arena_job *aj = more ? &more->job : NULL;
    memset(j, 0, sizeof *j);
    for (int tries = 0; aj && tries < 64; tries++) {
        uint32_t s1 = __atomic_load_n(&aj->seq, __ATOMIC_ACQUIRE);
        if (!s1)
            return 0;
        if (s1 & 1) {
            live_nap_us(10);
            continue;
        }
        j->rank = aj->rank;
        j->size = aj->size;
        j->launcher = aj->launcher;
        memcpy(j->id, aj->id, sizeof j->id);
        j->id[sizeof j->id - 1] = 0;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&aj->seq, __ATOMIC_RELAXED) == s1)
            return j->rank >= 0;
    }
    return 0;
}
