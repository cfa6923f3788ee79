/* Paused snapshots (docs/live.md "Consistency" and "Several processes"):
 * one process (the process level), or several at once (the job level:
 * every thread of every process paused at the same time, copied, then
 * released).
 *
 * For each process: take its pause word (pause_gen odd: one pausing
 * reader at a time; a dead reader's hold is broken), ask each running
 * thread to park at its next hook exit (ARENA_REQ_PAUSE).  Then, over all
 * of them: wait only for the threads inside a hook, copy every thread,
 * copy again every thread that moved meanwhile until none of any process
 * moved between its copy and the last check, and release them all.  A
 * parked thread waits at most 0.5 s whatever the reader does
 * (profiler/jprof/live/control.c), so a reader that dies holding a pause
 * holds nobody longer than that.
 *
 * Pause words are taken in pid order, so two readers pausing overlapping
 * sets never wait for each other in a circle. */
#include "profile/live_internal.h"
#include "common/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define GATHER_MAX_NS 100000000ull /* longest wait for threads to park */
#define RECOPY_ROUNDS 64           /* copies retaken until no thread moved */
#define TAKE_MAX_NS 2000000000ull  /* longest wait for another reader's pause to end */

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

/* Take l's pause word, waiting for another reader's pause to end until
 * wait_ns have passed (0: only a word that is free, or held by a reader
 * that died).  0, 1 when another reader holds it (wait_ns 0), or -1 with
 * err. */
static int pause_take(struct live *l, uint32_t *gen, uint64_t wait_ns, char *err, size_t errlen)
{
    struct arena_process *pr = live_at_rw(l, live_process_block(l));
    uint64_t deadline = hk_mono_ns() + wait_ns;
    for (int tries = 0;; tries++) {
        uint32_t g = __atomic_load_n(&pr->pause_gen, __ATOMIC_ACQUIRE);
        if (!(g & 1)) {
            if (__atomic_compare_exchange_n(&pr->pause_gen, &g, g + 1, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                pr->pause_owner = getpid();
                *gen = g + 1;
                return 0;
            }
            continue;
        }
        pid_t owner = pr->pause_owner;
        if (owner > 0 && kill(owner, 0) != 0 && errno == ESRCH) /* a reader died holding it */
            __atomic_compare_exchange_n(&pr->pause_gen, &g, g + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        if (!wait_ns && tries < 2)
            continue; /* a dead reader's hold just broken: take it */
        if (!wait_ns)
            return 1;
        if (hk_mono_ns() > deadline) {
            snprintf(err, errlen, "another reader keeps process %d paused", (int)l->pid);
            return -1;
        }
        live_nap_us(500);
    }
}

static void pause_release(struct live *l, uint32_t gen)
{
    struct arena_process *pr = live_at_rw(l, live_process_block(l));
    pr->pause_owner = 0;
    __atomic_store_n(&pr->pause_gen, gen + 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &pr->pause_gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* One process of the set. */
struct member {
    struct live *l;
    const struct arena_thread **recs;
    uint32_t n;
    struct live_snapshot *s;
    uint32_t gen;
    int taken;        /* its pause word is ours */
    uint32_t *before; /* each thread's seq at its copy (UINT32_MAX: none) */
    uint64_t t_post, t_release;
};

static void ask_to_park(struct member *m)
{
    m->t_post = hk_mono_ns();
    for (uint32_t i = 0; i < m->n; i++)
        if (m->recs[i]->state == ARENA_THREAD_RUNNING)
            __atomic_fetch_or((uint32_t *)live_at_rw(m->l, &m->recs[i]->request), ARENA_REQ_PAUSE,
                              __ATOMIC_RELEASE);
}

/* Threads of m inside a hook (seq odd, not parked); parked and quiet
 * (outside every hook, or ended) counted in m's snapshot. */
static uint32_t busy_threads(struct member *m)
{
    uint32_t parked = 0, quiet = 0, busy = 0;
    for (uint32_t i = 0; i < m->n; i++) {
        uint32_t seq = __atomic_load_n(&m->recs[i]->seq, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&m->recs[i]->parked, __ATOMIC_ACQUIRE))
            parked++;
        else if (m->recs[i]->state != ARENA_THREAD_RUNNING || !(seq & 1))
            quiet++;
        else
            busy++;
    }
    m->s->parked = parked;
    m->s->quiet = quiet;
    return busy;
}

/* Wait only for the threads inside a hook (they park at that hook's
 * exit): a thread outside every hook (blocked in a system call, or
 * running code without hooks) cannot change its tree until it enters one,
 * so it is not waited for; its copy is checked afterwards (copy_all).  At
 * most GATHER_MAX_NS for the whole set. */
static void gather(struct member *ms, uint32_t n)
{
    uint64_t t0 = hk_mono_ns();
    for (;;) {
        struct member *waiting = NULL;
        uint32_t parked_word = 0;
        for (uint32_t k = 0; k < n; k++) {
            const struct arena_process *pr = live_process_block(ms[k].l);
            uint32_t word = __atomic_load_n(&pr->parked, __ATOMIC_ACQUIRE);
            if (busy_threads(&ms[k]) && !waiting) {
                waiting = &ms[k];
                parked_word = word;
            }
        }
        if (!waiting || hk_mono_ns() - t0 >= GATHER_MAX_NS)
            break;
        /* Until a thread of the first busy process parks (it wakes us),
         * 50 us at most: a thread in a hook is microseconds from its exit
         * unless it lost its core. */
        struct timespec ts = { 0, 50000 };
        live_reader_waits++;
        syscall(SYS_futex, &live_process_block(waiting->l)->parked, FUTEX_WAIT, parked_word, &ts, NULL, 0);
    }
    uint64_t t1 = hk_mono_ns();
    for (uint32_t k = 0; k < n; k++)
        ms[k].s->gather_ns = t1 - ms[k].t_post;
}

/* Copy the threads of m not copied yet or that moved since their copy.
 * 1 when any was (re)copied, 0 none, -1 error. */
static int copy_movers(struct member *m, char *err, size_t errlen)
{
    int moved = 0;
    for (uint32_t i = 0; i < m->n; i++) {
        uint32_t seq = __atomic_load_n(&m->recs[i]->seq, __ATOMIC_ACQUIRE);
        if (seq == m->before[i])
            continue;
        struct live_thread *t = &m->s->threads[i];
        if (m->before[i] != UINT32_MAX) {
            free(t->nodes);
            free(t->stack);
            memset(t, 0, sizeof *t);
            m->s->recopied++;
        }
        m->before[i] = seq;
        if (live_copy_thread(m->l, m->recs[i], t, err, errlen) != 0)
            return -1;
        if (t->how != LIVE_COPY_SELF)
            t->now = live_clock_now(m->l);
        moved = 1;
    }
    return moved;
}

/* Copy every thread of every process so that all copies hold at one
 * moment: copies are taken again until no thread of any process moved
 * between the first copy's start and the last check (a parked thread
 * never moves; one outside the hooks rarely does, and parks at its next
 * hook exit when it does).  Then, at every moment of that interval, each
 * thread was in the state copied. */
static int copy_all(struct member *ms, uint32_t n, char *err, size_t errlen)
{
    for (uint32_t round = 0; round < RECOPY_ROUNDS; round++) {
        int moved = 0;
        for (uint32_t k = 0; k < n; k++) {
            int rc = copy_movers(&ms[k], err, errlen);
            if (rc < 0)
                return -1;
            moved |= rc;
        }
        if (!moved)
            return 0;
        /* Check them all again: who moved since its copy? */
        int again = 0;
        for (uint32_t k = 0; k < n && !again; k++)
            for (uint32_t i = 0; i < ms[k].n && !again; i++)
                again = __atomic_load_n(&ms[k].recs[i]->seq, __ATOMIC_ACQUIRE) != ms[k].before[i];
        if (!again)
            return 0;
        live_nap_us(20); /* let the movers reach their park */
    }
    return 0;
}

/* Set the copies' moment and kinds once copied. */
static void settle(struct member *m)
{
    struct live_snapshot *s = m->s;
    for (uint32_t i = 0; i < m->n; i++) {
        struct live_thread *t = &s->threads[i];
        if (t->now > s->now)
            s->now = t->now;
        if (m->l->dead)
            t->how = LIVE_COPY_DEAD;
        else if (t->how == LIVE_COPY_SEQ && __atomic_load_n(&m->recs[i]->parked, __ATOMIC_ACQUIRE))
            t->how = LIVE_COPY_PARKED;
    }
    s->nthreads = m->n;
}

/* HOOKIT_LIVE_HOLD_MS: the reader holds the pause this long after copying
 * (tests: a reader killed while it holds one). */
static void hold_for_tests(void)
{
    const char *v = getenv("HOOKIT_LIVE_HOLD_MS");
    long ms = v && *v ? strtol(v, NULL, 10) : 0;
    if (ms > 0 && ms < 60000) {
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
        fprintf(stderr, "hookit: holding the pause %ld ms (HOOKIT_LIVE_HOLD_MS)\n", ms);
        nanosleep(&ts, NULL);
    }
}

static int by_pid(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    return (x->l->pid > y->l->pid) - (x->l->pid < y->l->pid);
}

static void release_all(struct member *ms, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        if (ms[k].taken)
            pause_release(ms[k].l, ms[k].gen);
        ms[k].taken = 0;
        ms[k].t_release = hk_mono_ns();
    }
}

/* Every pause word of the set, in pid order; each waited for at most
 * wait_ns.  0; 1 when one was held by another reader (wait_ns 0), or -1
 * with err: those taken are released then. */
static int take_all(struct member *ms, uint32_t n, uint64_t wait_ns, char *err, size_t errlen)
{
    int rc = 0;
    for (uint32_t k = 0; k < n && rc == 0; k++)
        if (!ms[k].l->dead && (rc = pause_take(ms[k].l, &ms[k].gen, wait_ns, err, errlen)) == 0)
            ms[k].taken = 1;
    if (rc != 0)
        release_all(ms, n);
    return rc;
}

/* With other readers (several hosts): a reader that waited for a word
 * while it held others would wait, through its readers' barrier, for a
 * reader of another client that waits for one of its words: so each
 * reader only tries its words, and the readers agree (sync->at,
 * LIVE_SYNC_TAKEN or LIVE_SYNC_BUSY) to go on, or to release them all and
 * try again a moment later (LIVE_SYNC_AGAIN), or to give up.  Nobody is
 * asked to park before they all have every word. */
static int take_all_together(struct member *ms, uint32_t n, const struct live_sync *sync, char *err,
                             size_t errlen)
{
    unsigned seed = (unsigned)getpid() ^ (unsigned)hk_mono_ns();
    for (uint32_t attempt = 0;; attempt++) {
        int rc = take_all(ms, n, 0, err, errlen);
        if (rc < 0)
            return -1;
        int agreed = sync->at(sync->ctx, rc ? LIVE_SYNC_BUSY : LIVE_SYNC_TAKEN, err, errlen);
        if (agreed == 0)
            return 0;
        release_all(ms, n);
        if (agreed != LIVE_SYNC_AGAIN)
            return -1;
        /* another client's readers hold some: a random moment, growing */
        live_nap_us(200 + (unsigned)rand_r(&seed) % (500u << (attempt < 4 ? attempt : 4)));
    }
}

int live_pause_snapshots(struct live **ls, const struct arena_thread ***recs, const uint32_t *nrecs,
                         uint32_t n, struct live_snapshot *snaps, const struct live_sync *sync, char *err,
                         size_t errlen)
{
    struct member *ms = calloc(n + 1, sizeof *ms);
    if (!ms) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (uint32_t k = 0; k < n && rc == 0; k++) {
        ms[k] = (struct member){ .l = ls[k], .recs = recs[k], .n = nrecs[k], .s = &snaps[k] };
        ms[k].before = malloc(((size_t)nrecs[k] + 1) * sizeof *ms[k].before);
        if (!ms[k].before) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
        for (uint32_t i = 0; ms[k].before && i < nrecs[k]; i++)
            ms[k].before[i] = UINT32_MAX; /* not copied yet */
        if (rc == 0 && !ls[k]->dead)
            rc = live_make_writable(ls[k], err, errlen);
    }
    qsort(ms, n, sizeof *ms, by_pid);
    if (rc == 0)
        rc = sync ? take_all_together(ms, n, sync, err, errlen) : take_all(ms, n, TAKE_MAX_NS, err, errlen);
    uint64_t runnable0 = runnable_ns(), t_first = hk_mono_ns(), t_copy = 0;
    uint32_t waits0 = live_reader_waits;
    if (rc == 0) {
        for (uint32_t k = 0; k < n; k++)
            if (ms[k].taken)
                ask_to_park(&ms[k]);
            else
                ms[k].t_post = hk_mono_ns();
        gather(ms, n);
        /* every reader's processes paused before any copies */
        if (sync && sync->at(sync->ctx, LIVE_SYNC_PAUSED, err, errlen) != 0)
            rc = -1;
        for (uint32_t k = 0; k < n && rc == 0; k++)
            ms[k].s->now = live_process_now(ms[k].l, &ms[k].s->ticks_per_ns);
        t_copy = hk_mono_ns();
        if (rc == 0)
            rc = copy_all(ms, n, err, errlen);
        if (rc == 0)
            hold_for_tests();
        /* every reader's copies taken before any release */
        if (rc == 0 && sync && sync->at(sync->ctx, LIVE_SYNC_COPIED, err, errlen) != 0)
            rc = -1;
    }
    release_all(ms, n);
    uint64_t t_last = hk_mono_ns();
    uint64_t runnable1 = runnable0 != UINT64_MAX ? runnable_ns() : UINT64_MAX;
    for (uint32_t k = 0; k < n; k++) {
        struct live_snapshot *s = ms[k].s;
        settle(&ms[k]);
        if (rc != 0)
            continue;
        s->pause_ns = ms[k].t_release - ms[k].t_post;
        s->copy_ns = ms[k].t_release - t_copy;
        s->set_pause_ns = t_last - t_first;
        s->set_processes = n;
        /* the reader's own waits, over the whole set's pause */
        s->waits = live_reader_waits - waits0;
        s->runnable_ns =
            runnable1 != UINT64_MAX && runnable1 >= runnable0 ? runnable1 - runnable0 : UINT64_MAX;
    }
    for (uint32_t k = 0; k < n; k++)
        free(ms[k].before);
    free(ms);
    return rc;
}
