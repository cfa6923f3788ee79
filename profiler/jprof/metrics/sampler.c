/* timer=sample: exact call counts from the hooks, time from sampling.
 * (JPROFOPTS=cpu runs the same timers under exact timing: the samples are
 * then the cpu_ns column, wait.c, and times stay exact.)
 * Each thread gets a CPU-time timer (CLOCK_THREAD_CPUTIME_ID) that signals
 * that very thread; the handler charges one sample to the thread's current
 * node.  The hooks then read no clock at all.
 *
 * A CPU-time timer only runs while its thread runs, so a thread blocked in
 * a system call is never interrupted by it. */
#include "profiler/jprof/jprof.h"
#include "sampler.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SAMPLE_SIGNAL SIGPROF

static __thread timer_t thread_timer __attribute__((tls_model("initial-exec")));
static __thread int has_timer __attribute__((tls_model("initial-exec")));
static int sampling;

/* Our timers' signals carry this value; any other SIGPROF is the
 * application's and is passed on to it. */
#define SAMPLE_COOKIE 0x686b7370    /* "hksp" */

JP_NOINSTR static int on_sample(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)uc;
    if (!info || info->si_code != SI_TIMER || info->si_value.sival_int != SAMPLE_COOKIE)
        return 1;
    /* Expirations while the signal was pending come as one signal with
     * si_overrun set (a CPU-time timer fires on the kernel's tick, so
     * several periods of 1 ms may end at once): each is a sample. */
    struct jp_thread *t = jp_self_live();
    if (!t)
        return 0;
    uint64_t n = 1 + (uint64_t)(info->si_overrun > 0 ? info->si_overrun : 0);
    jp_node(jp_cur(t))->samples += n;
    /* A CPU-time timer fires during a blocking call only when the thread
     * runs a callback (a signal handler): its samples are what wait.c
     * subtracts from the call under timer=sample, frames having no start
     * time there (under exact timing, JPROFOPTS=cpu, the frames tell). */
    if (jp_opt.sample && t->wait.active && jp_depth(t) > t->wait.depth)
        t->wait.cb_samples += n;
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

JP_NOINSTR int jp_sampler_start(void)
{
    if (!jp_host->signal_first || jp_host->signal_first(SAMPLE_SIGNAL, on_sample) != 0)
        return -1;
    sampling = 1;
    return 0;
}

/* Arm this thread's timer; called when a thread is first seen. */
JP_NOINSTR void jp_sampler_thread_start(void)
{
    if (!sampling || has_timer)
        return;
    int saved = errno;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SAMPLE_SIGNAL;
    sev.sigev_value.sival_int = SAMPLE_COOKIE;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &thread_timer) == 0) {
        long ns = (long)jp_sample_period_ns();
        struct itimerspec its = { .it_interval = { ns / 1000000000L, ns % 1000000000L },
                                  .it_value = { ns / 1000000000L, ns % 1000000000L } };
        timer_settime(thread_timer, 0, &its, NULL);
        has_timer = 1;
    }
    errno = saved;
}

JP_NOINSTR void jp_sampler_thread_end(void)
{
    if (!has_timer)
        return;
    int saved = errno;
    timer_delete(thread_timer);
    has_timer = 0;
    errno = saved;
}

/* A forked child has no timers: the surviving thread needs a new one. */
JP_NOINSTR void jp_sampler_fork_child(void)
{
    has_timer = 0;
    jp_sampler_thread_start();
}
