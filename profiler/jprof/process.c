/* The profiled process's metadata for the profile: pid, parent, executable,
 * arguments, MPI rank, times, and how the run ended. */
#include "jprof.h"
#include "profile/procinfo.h"
#include "profile/profile.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
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

JP_NOINSTR static int set_meta_u64(struct profile *p, const char *key, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return profile_set_meta(p, key, buf);
}

JP_NOINSTR int jp_fill_process(struct profile *p, int how)
{
    char exe[4096], buf[256];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    p->process.pid = jp_profiled_pid ? jp_profiled_pid : getpid();
    p->process.ppid = jp_profiled_pid ? jp_profiled_ppid : getppid();
    p->process.rank = jp_rank;
    p->process.size = jp_size;
    p->process.exe = profile_intern(p, exe);
    p->process.start_ns = jp_start_wall_ns;
    p->process.duration_ns = hk_mono_ns() - start_mono_ns;
    int rc = p->process.exe ? procinfo_fill_argv(p) : -1;
    struct utsname u;
    if (rc == 0 && uname(&u) == 0)
        rc = profile_set_meta(p, "hostname", u.nodename);
    snprintf(buf, sizeof buf, "%.6f", jp_ticks_per_ns());
    rc |= profile_set_meta(p, "hookit_version", HOOKIT_VERSION);
    rc |= profile_set_meta(p, "profiler", "jprof");
    rc |= profile_set_meta(p, "clock", jp_clock_is_tsc() ? HK_COUNTER_NAME : "monotonic");
    rc |= profile_set_meta(p, "timer", jp_sampling() ? "sample" : "exact");
    if (!jp_sampling()) {
        rc |= set_meta_u64(p, "overhead_ns_per_call", jp_ticks_to_ns(jp_overhead_full_ticks()));
        rc |= set_meta_u64(p, "overhead_inner_ns_per_call", jp_ticks_to_ns(jp_overhead_inner_ticks()));
        rc |= profile_set_meta(p, "compensated", jp_opt.compensate ? "yes" : "no");
    }
    if (jp_sampling())
        rc |= set_meta_u64(p, "sample_period_ns", jp_sample_period_ns());
    rc |= profile_set_meta(p, "ticks_per_ns", buf);
    rc |= profile_set_meta(p, "end", procinfo_end_name(how));
    if (how == HOOKIT_END_SIGNAL && jp_death_signal > 0) {
        snprintf(buf, sizeof buf, "%d (%s)", jp_death_signal, strsignal(jp_death_signal));
        rc |= profile_set_meta(p, "signal", buf);
    }
    rc |= set_meta_u64(p, "dropped_events", sum_over_threads(offsetof(struct arena_thread, dropped)));
    rc |= set_meta_u64(p, "unmatched_exits", sum_over_threads(offsetof(struct arena_thread, unmatched)));
    return rc ? -1 : 0;
}
