/* timer=sample (the default): exact call counts from the hooks, time from
 * sampling each thread's CPU time.  (JPROFOPTS=cpu runs the same sampler
 * under exact timing: the samples are then the cpu_ns column, wait.c, and
 * times stay exact.)
 *
 * Each thread gets a sampler that signals that very thread every
 * sample_us of its CPU time; the handler charges the thread's current node,
 * unless the interrupted instruction is hookit's own (own_code.c): that
 * time is the profiler's, never the program's.  The hooks read no clock.
 *
 * Two sources, the better first:
 *  - a perf task-clock event per thread (perf_event_open, a software
 *    event: no hardware counters needed), which fires at any period on a
 *    high-resolution timer.  It samples user time only: a period that ends
 *    in the kernel raises no signal, so no system call of the program is
 *    ever interrupted by one (a poll() with a zero timeout would otherwise
 *    fail with EINTR), and none can be left pending across an exec.  The
 *    kernel time this leaves out is the program's blocking calls, which the
 *    wait and I/O wrappers measure instead, and its other system calls and
 *    page faults, which no profile of user code places anyway.  Its signal
 *    carries the event's descriptor (F_SETSIG), which tells it from the
 *    program's own SIGPROF; a read-only ring of one page (the kernel
 *    overwrites it) counts the periods a merged signal stood for.  The
 *    descriptor is moved to a high number, close-on-exec.
 *  - a POSIX CPU-time timer (CLOCK_THREAD_CPUTIME_ID), where perf events
 *    are not allowed (perf_event_paranoid 3, a seccomp filter).  The
 *    kernel checks it only at its tick (4 ms at HZ=250), so a period below
 *    the tick comes as one signal with si_overrun set, and an estimate
 *    rests on 4-10 times fewer samples.
 * The profile names the source (meta "sampler").
 *
 * Either runs only while its thread runs, so a thread blocked in a system
 * call is never interrupted by it. */
#include "profiler/jprof/jprof.h"
#include "sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SAMPLE_SIGNAL SIGPROF

enum sampler_source { SOURCE_NONE, SOURCE_PERF, SOURCE_TIMER };
static enum sampler_source source;
static int sampling;

static __thread timer_t thread_timer __attribute__((tls_model("initial-exec")));
static __thread int has_timer __attribute__((tls_model("initial-exec")));
/* The perf source: this thread's event (fd + 1, so 0 is none) and its ring. */
static __thread int perf_fd_plus1 __attribute__((tls_model("initial-exec")));
static __thread struct perf_event_mmap_page *perf_ring __attribute__((tls_model("initial-exec")));
static __thread uint64_t perf_seen __attribute__((tls_model("initial-exec")));
/* The event this thread closed last: a signal it raised while blocked (a
 * thread ending inside a handler) may still come after the close, and is
 * ours to drop, never the program's to die of. */
static __thread int perf_closed_plus1 __attribute__((tls_model("initial-exec")));

/* Our timers' signals carry this value; any other SIGPROF is the
 * application's and is passed on to it. */
#define SAMPLE_COOKIE 0x686b7370 /* "hksp" */

/* Each period a task-clock event ends writes one record of this size to
 * the ring (sample_type 0: the header alone). */
#define PERF_RECORD_BYTES sizeof(struct perf_event_header)
#define PERF_RING_BYTES (2 * 4096)

/* How many periods the signal in info stands for; 0 when it is not ours,
 * UINT64_MAX when it is ours but stands for nothing (a closed event's). */
JP_NOINSTR static uint64_t periods_of(const siginfo_t *info)
{
    if (info->si_code == SI_TIMER && info->si_value.sival_int == SAMPLE_COOKIE)
        return 1 + (uint64_t)(info->si_overrun > 0 ? info->si_overrun : 0);
    if (info->si_code <= 0 || !info->si_fd)
        return 0;
    if (perf_closed_plus1 && info->si_fd == perf_closed_plus1 - 1 && info->si_fd != perf_fd_plus1 - 1)
        return UINT64_MAX; /* late: nothing to count */
    if (!perf_fd_plus1 || info->si_fd != perf_fd_plus1 - 1)
        return 0;
    uint64_t head = __atomic_load_n(&perf_ring->data_head, __ATOMIC_ACQUIRE);
    uint64_t n = (head - perf_seen) / PERF_RECORD_BYTES;
    perf_seen = head;
    return n ? n : 1;
}

JP_NOINSTR static int on_sample(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    if (!info)
        return 1;
    /* Expirations while the signal was pending come as one signal (a CPU
     * timer's si_overrun; the perf ring's records): each is a sample. */
    uint64_t n = periods_of(info);
    if (!n)
        return 1;
    struct jp_thread *t = jp_self_live();
    if (!t || n == UINT64_MAX)
        return 0;
    /* A CPU-time sampler fires during a blocking call only when the thread
     * runs a callback (a signal handler): its samples, in hookit's code or
     * not, are what wait.c subtracts from the call under timer=sample,
     * frames having no start time there (under exact timing,
     * JPROFOPTS=cpu, the frames tell). */
    if (jp_opt.sample && t->wait.active && jp_depth(t) > t->wait.depth)
        t->wait.cb_samples += n;
    /* The hooks' own time is not the node's (own_code.c). */
    uintptr_t pc = jp_interrupted_pc(uc);
    if (jp_own_code(pc)) {
        t->own_samples += n;
        return 0;
    }
    arena_ref cur = jp_cur(t);
    jp_node(cur)->samples += n;
    if (jp_opt.sample)
        jp_pc_sample(t, pc, cur, n);
    return 0;
}

JP_NOINSTR uint64_t jp_sample_period_ns(void)
{
    return (uint64_t)jp_opt.sample_us * 1000u;
}

JP_NOINSTR int jp_sampling(void)
{
    return sampling && jp_opt.sample;
}

JP_NOINSTR int jp_sampler_running(void)
{
    return sampling;
}

JP_NOINSTR const char *jp_sampler_source(void)
{
    switch (source) {
    case SOURCE_PERF:
        return "perf task-clock, user time";
    case SOURCE_TIMER:
        return "cpu timer";
    default:
        return "none";
    }
}

JP_NOINSTR uint64_t jp_own_samples(void)
{
    uint64_t n = 0;
    for (const struct jp_thread *t = jp_thread_all(); t; t = t->all_next)
        n += t->own_samples;
    return n;
}

JP_NOINSTR uint64_t jp_pc_unplaced(void)
{
    uint64_t n = 0;
    for (const struct jp_thread *t = jp_thread_all(); t; t = t->all_next)
        n += t->pc_unplaced;
    return n;
}

/* ---- the perf source ------------------------------------------------------- */
/* Where our descriptors go: high, out of the numbers a program picks with
 * dup2 or expects the next open to return. */
JP_NOINSTR static int perf_fd_floor(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY || r.rlim_cur > 4096)
        return 1024;
    return r.rlim_cur > 64 ? (int)(r.rlim_cur / 2) : 3;
}

JP_NOINSTR static int perf_open(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_SOFTWARE;
    a.size = sizeof a;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = jp_sample_period_ns();
    a.wakeup_events = 1;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* This thread's event, signalling this thread; 0 or -1. */
JP_NOINSTR static int perf_thread_start(void)
{
    int fd = perf_open();
    if (fd < 0)
        return -1;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, perf_fd_floor());
    if (high >= 0) {
        close(fd);
        fd = high;
    }
    struct f_owner_ex owner = { F_OWNER_TID, (pid_t)syscall(SYS_gettid) };
    /* Read-only: the kernel overwrites the ring and never stops for room. */
    void *ring = mmap(NULL, PERF_RING_BYTES, PROT_READ, MAP_SHARED, fd, 0);
    if (ring == MAP_FAILED || fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) != 0
        || fcntl(fd, F_SETSIG, SAMPLE_SIGNAL) != 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0) {
        if (ring != MAP_FAILED)
            munmap(ring, PERF_RING_BYTES);
        close(fd);
        return -1;
    }
    perf_ring = ring;
    perf_seen = 0;
    perf_fd_plus1 = fd + 1;
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    return 0;
}

/* disable: 0 in a fork child, whose descriptor is the parent's event. */
JP_NOINSTR static void perf_thread_stop(int disable)
{
    if (!perf_fd_plus1)
        return;
    int fd = perf_fd_plus1 - 1;
    perf_closed_plus1 = perf_fd_plus1;
    perf_fd_plus1 = 0;
    if (disable)
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    munmap(perf_ring, PERF_RING_BYTES);
    perf_ring = NULL;
    close(fd);
}

/* Whether the system allows perf events, tried once at start. */
JP_NOINSTR static enum sampler_source perf_allowed(void)
{
    int fd = perf_open();
    if (fd < 0)
        return SOURCE_TIMER;
    close(fd);
    return SOURCE_PERF;
}

/* ---- the CPU-time timer source ---------------------------------------------- */
JP_NOINSTR static int timer_thread_start(void)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SAMPLE_SIGNAL;
    sev.sigev_value.sival_int = SAMPLE_COOKIE;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &thread_timer) != 0)
        return -1;
    long ns = (long)jp_sample_period_ns();
    struct itimerspec its = { .it_interval = { ns / 1000000000L, ns % 1000000000L },
                              .it_value = { ns / 1000000000L, ns % 1000000000L } };
    timer_settime(thread_timer, 0, &its, NULL);
    has_timer = 1;
    return 0;
}

/* ---- per process and per thread ----------------------------------------------- */
JP_NOINSTR int jp_sampler_start(void)
{
    jp_own_code_init();
    if (!jp_host->signal_first || jp_host->signal_first(SAMPLE_SIGNAL, on_sample) != 0)
        return -1;
    int saved = errno;
    source = jp_opt.sampler_timer ? SOURCE_TIMER : perf_allowed();
    errno = saved;
    sampling = 1;
    return 0;
}

/* Arm this thread's sampler; called when a thread is first seen.  A thread
 * the perf source cannot serve (no descriptor left) gets the timer. */
JP_NOINSTR void jp_sampler_thread_start(void)
{
    if (!sampling || has_timer || perf_fd_plus1)
        return;
    int saved = errno;
    if (source == SOURCE_TIMER || perf_thread_start() != 0)
        timer_thread_start();
    errno = saved;
}

/* Also before an exec (HOOKIT_EV_EXEC; jp_sampler_thread_start again if
 * it fails): no signal of ours may reach the new program. */
JP_NOINSTR void jp_sampler_thread_end(void)
{
    int saved = errno;
    perf_thread_stop(1);
    if (has_timer) {
        timer_delete(thread_timer);
        has_timer = 0;
    }
    errno = saved;
}

/* A forked child has no timers, and its copy of the parent thread's perf
 * descriptor would count and signal the parent: the surviving thread
 * needs its own. */
JP_NOINSTR void jp_sampler_fork_child(void)
{
    perf_thread_stop(0);
    has_timer = 0;
    jp_sampler_thread_start();
}
