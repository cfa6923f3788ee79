/* libjprof's I/O and memory metrics: the options, start and fork child
 * (metrics.h), and what every part shares, the clock and a few helpers.
 * The parts, one file per concern, are listed in metrics_internal.h; the
 * numbers are described in docs/io.md. */
#include "metrics_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

struct metrics_config metrics_cfg = { .io = 1, .alloc = 0, .interval_ns = 1000000000ull };

/* ---- options ------------------------------------------------------------------------- */
JP_NOINSTR int jp_opt_io(const char *v)
{
    (void)v;
    metrics_cfg.io = 1;
    return 0;
}
JP_NOINSTR int jp_opt_noio(const char *v)
{
    (void)v;
    metrics_cfg.io = 0;
    return 0;
}
JP_NOINSTR int jp_opt_alloc(const char *v)
{
    (void)v;
    metrics_cfg.alloc = 1;
    return 0;
}

/* DURATION: a number with a unit ns, us, ms, s (a bare number is seconds). */
JP_NOINSTR int jp_opt_io_interval(const char *v)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || errno || x <= 0)
        return -1;
    double scale = !strcmp(end, "ns") ? 1 : !strcmp(end, "us") ? 1e3 : !strcmp(end, "ms") ? 1e6 :
                   (!strcmp(end, "s") || !*end) ? 1e9 : -1;
    if (scale < 0 || x * scale < 1000 || x * scale > 1e15)
        return -1;
    metrics_cfg.interval_ns = (uint64_t)(x * scale + 0.5);
    return 0;
}

/* ---- shared helpers ---------------------------------------------------------------------- */
/* An older libhookit has no wrappers (no io_now): nothing to count. */
JP_NOINSTR static int host_has_wrappers(void)
{
    const struct hookit_host *h = metrics_cfg.host;
    return h && h->size >= sizeof *h && h->io_now;
}

JP_NOINSTR int metrics_active(void)
{
    return host_has_wrappers() && (metrics_cfg.io || metrics_cfg.alloc);
}

/* The rate is asked for at the first event, not at start: the host
 * calibrates its clock after the plugin has started. */
JP_NOINSTR void metrics_rate_init(void)
{
    const struct hookit_host *h = metrics_cfg.host;
    double r = h->size >= sizeof *h && h->io_ticks_per_ns ? h->io_ticks_per_ns() : 1.0;
    uint64_t it = (uint64_t)((double)metrics_cfg.interval_ns * r);
    metrics_cfg.interval_ticks = it ? it : 1;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    metrics_cfg.rate = r;
}

/* The time stamps of the heap series: CLOCK_MONOTONIC_COARSE (the kernel's
 * tick, 1 to 4 ms; a few ns to read, no TSC), read on a new high of the
 * thread's slice and every 32 allocations, never per call. */
JP_NOINSTR uint64_t metrics_coarse_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* MAP_NORESERVE: the tables are sized for the worst case and only the
 * pages touched cost memory. */
JP_NOINSTR void *metrics_reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* ---- plugin entry points ------------------------------------------------------------------ */
JP_NOINSTR uint32_t jp_metrics_start(const struct hookit_host *h)
{
    metrics_cfg.host = h;
    if (!host_has_wrappers())
        return 0;
    metrics_cfg.start_tick = h->io_now();
    metrics_cfg.start_coarse = metrics_coarse_ns();
    if (!metrics_cfg.io && !metrics_cfg.alloc)
        return 0;
    metrics_files_start();
    metrics_series_start();
    if (metrics_cfg.alloc)
        metrics_blocks_start();
    return (metrics_cfg.io ? HOOKIT_CAP_IO : 0) | (metrics_cfg.alloc ? HOOKIT_CAP_ALLOC : 0);
}

/* The child's profile holds what the child did: counters restart (live
 * blocks stay: the child owns a copy of the heap).  Only this thread
 * survives the fork: every other thread's batch is folded in here. */
JP_NOINSTR void jp_metrics_fork_child(void)
{
    if (!host_has_wrappers())
        return;
    metrics_cfg.start_tick = metrics_cfg.host->io_now();
    metrics_cfg.start_coarse = metrics_coarse_ns();
    metrics_files_fork_child();
    metrics_series_fork_child();
    int64_t live = metrics_live_now();
    metrics_counts_fork_child();
    metrics_heap_fork_child(live);
    metrics_blocks_fork_child();
}
