/* What every part of libjprof reads (jprof.h): the host libhookit gave at
 * start, the options, the calling thread's state and the list of every
 * thread state.  They live here, below every folder, so that reading them
 * ties a part to nothing but the base. */
#include "profiler/jprof/jprof.h"

const struct hookit_host *jp_host;

struct jp_options jp_opt = {
    .use_tsc = 1,
    .lines = 0,
    .start_on = 1,
    .control_thread = JP_CONTROL_THREADED,
    .sample = 1,
    .sample_us = 250,
    .death_timeout_ms = 10000,
    .threads_kept = 1000,
    .throttle_ns = 1000,
    .patch = 1,
};

__thread struct jp_thread *jp_self __attribute__((tls_model("initial-exec")));

/* Every state made, newest first (jp_thread_all; thread.c adds each with
 * jp_thread_list).  A state joins once, when its pages are new, and is
 * never unmapped after: the metrics read the list at any time from any
 * thread. */
static struct jp_thread *all_threads;

JP_NOINSTR struct jp_thread *jp_thread_all(void)
{
    return __atomic_load_n(&all_threads, __ATOMIC_ACQUIRE);
}

JP_NOINSTR void jp_thread_list(struct jp_thread *t)
{
    struct jp_thread *head = __atomic_load_n(&all_threads, __ATOMIC_RELAXED);
    do
        t->all_next = head;
    while (!__atomic_compare_exchange_n(&all_threads, &head, t, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}
