/* The profiled process's metadata for the profile: pid, parent, executable,
 * arguments, MPI rank, times, and how the run ended. */
#include "profiler/jprof/jprof.h"
#include "output.h"
#include "profiler/jprof/metrics/metrics.h"
#include "profiler/jprof/metrics/sampler.h"
#include "profiler/jprof/tree/skip.h"
#include "profiler/jprof/tree/tree.h"
#include "profile/arena_walk.h"
#include "profile/procinfo.h"
#include "profile/profile.h"

#include <stddef.h>
#include <time.h>
#include <unistd.h>

int jp_rank = -1, jp_size = -1;
/* Who the profile is about: the profiled process, even when a helper
 * process writes it (death by a signal, output.c). */
pid_t jp_profiled_pid, jp_profiled_ppid;
uint64_t jp_start_wall_ns;
static uint64_t start_mono_ns;
int jp_death_signal;

JP_NOINSTR void jp_process_start(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    jp_start_wall_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    start_mono_ns = hk_mono_ns();
    jp_profiled_pid = 0;
}

JP_NOINSTR static uint64_t sum_over_threads(size_t field_offset)
{
    uint64_t sum = 0;
    for (arena_ref r = jp_arena_header()->first_thread; r; r = ((struct arena_thread *)jp_at(r))->next)
        sum += *(uint64_t *)((char *)jp_at(r) + field_offset);
    return sum;
}

JP_NOINSTR int jp_fill_process(struct profile *p, int how)
{
    int rc = procinfo_fill_self(p, jp_profiled_pid ? jp_profiled_pid : getpid(),
                                jp_profiled_pid ? jp_profiled_ppid : getppid(), jp_rank, jp_size);
    p->process.start_ns = jp_start_wall_ns;
    p->process.duration_ns = hk_mono_ns() - start_mono_ns;
    struct procinfo_meta m = {
        .profiler = "jprof",
        .clock = jp_clock_is_tsc() ? HK_COUNTER_NAME : "monotonic",
        .ticks_per_ns = jp_ticks_per_ns(),
        .end = procinfo_end_name(how),
        .signal = how == HOOKIT_END_SIGNAL ? jp_death_signal : 0,
    };
    if (rc == 0)
        rc = procinfo_set_meta(p, &m);
    rc |= profile_set_meta(p, "timer", jp_sampling() ? "sample" : "exact");
    if (!jp_sampling()) {
        rc |= procinfo_set_meta_u64(p, "overhead_ns_per_call", jp_ticks_to_ns(jp_overhead_full_ticks()));
        rc |= procinfo_set_meta_u64(p, "overhead_inner_ns_per_call",
                                    jp_ticks_to_ns(jp_overhead_inner_ticks()));
        rc |= profile_set_meta(p, "compensated", jp_opt.compensate ? "yes" : "no");
    }
    if (jp_sampler_running()) {
        rc |= procinfo_set_meta_u64(p, "sample_period_ns", jp_sample_period_ns());
        /* Samples in hookit's own code: charged to no node (own_code.c). */
        rc |= procinfo_set_meta_u64(p, "hookit_samples", jp_own_samples());
        rc |= procinfo_set_meta_u64(p, "hookit_sampled_ns", jp_own_samples() * jp_sample_period_ns());
        if (jp_sampling())
            rc |= procinfo_set_meta_u64(p, "pc_samples_unplaced", jp_pc_unplaced());
        rc |= profile_set_meta(p, "own_code_filter", jp_own_code_segments_known() ? "on" : "stubs only");
        rc |= profile_set_meta(p, "sampler", jp_sampler_source());
    }
    rc |= procinfo_set_meta_u64(p, "dropped_events", sum_over_threads(offsetof(struct arena_thread, dropped)));
    rc |= procinfo_set_meta_u64(p, "unmatched_exits", sum_over_threads(offsetof(struct arena_thread, unmatched)));
    if (jp_unmatched_restart_exits())
        rc |= procinfo_set_meta_u64(p, "unmatched_after_start", jp_unmatched_restart_exits());
    rc |= jp_skip_meta(p);
    rc |= arena_control_log_meta(p, jp_at(ARENA_CONTROL_LOG_REF), start_mono_ns);
    return rc ? -1 : 0;
}
