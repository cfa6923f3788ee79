/* Time: the TSC, read without serialisation, when it is invariant (it ticks
 * at a constant rate in every power state and is what the kernel itself
 * uses as its clock); CLOCK_MONOTONIC otherwise.  Trees hold raw ticks;
 * they become nanoseconds when a profile is written, with a rate measured
 * against CLOCK_MONOTONIC over the whole run (at least 2 ms). */
#include "jprof.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static int use_tsc;
static uint64_t tsc0, mono0;
static double ticks_per_ns = 1.0;

#define MIN_CALIBRATION_NS 2000000ull

JP_NOINSTR uint64_t jp_now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

JP_NOINSTR static int kernel_clock_is_tsc(void)
{
    char name[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
    if (!f)
        return 0;
    int ok = fgets(name, sizeof name, f) && !strncmp(name, "tsc", 3);
    fclose(f);
    return ok;
}

JP_NOINSTR static int tsc_is_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)))
        return 1;
    return kernel_clock_is_tsc();
#else
    return 0;
#endif
}

JP_NOINSTR void jp_clock_init(int want_tsc)
{
    use_tsc = want_tsc && tsc_is_invariant();
    mono0 = jp_now_mono();
    tsc0 = use_tsc ? jp_tsc() : mono0;
    ticks_per_ns = 1.0;
    jp_arena_header()->clock = use_tsc ? 0 : 1;
    jp_arena_header()->ticks_per_ns = 1.0;
}

JP_NOINSTR int jp_clock_is_tsc(void)
{
    return use_tsc;
}

/* Measure the TSC rate over everything since start. */
JP_NOINSTR void jp_clock_calibrate(void)
{
    if (!use_tsc)
        return;
    uint64_t mono, tsc;
    do {
        mono = jp_now_mono();
        tsc = jp_tsc();
    } while (mono - mono0 < MIN_CALIBRATION_NS);
    ticks_per_ns = (double)(tsc - tsc0) / (double)(mono - mono0);
    if (ticks_per_ns <= 0)
        ticks_per_ns = 1.0;
    jp_arena_header()->ticks_per_ns = ticks_per_ns;
}

JP_NOINSTR double jp_ticks_per_ns(void)
{
    return ticks_per_ns;
}

JP_NOINSTR uint64_t jp_ticks_to_ns(uint64_t ticks)
{
    return (uint64_t)((double)ticks / ticks_per_ns + 0.5);
}
