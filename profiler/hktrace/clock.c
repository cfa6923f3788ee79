/* Time: the TSC when it is invariant, CLOCK_MONOTONIC otherwise (the same
 * choice as libjprof).  Records hold raw ticks; the rate is measured
 * against CLOCK_MONOTONIC over the whole run when the trace is written. */
#include "hktrace.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static int use_tsc;
static uint64_t tsc0, mono0;
static double ticks_per_ns = 1.0;
uint64_t ht_threshold_ticks;

#define MIN_CALIBRATION_NS 2000000ull
#define QUICK_CALIBRATION_NS 1000000ull

HT_NOINSTR uint64_t ht_now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

HT_NOINSTR static int tsc_is_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)))
        return 1;
    char name[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
    if (!f)
        return 0;
    int ok = fgets(name, sizeof name, f) && !strncmp(name, "tsc", 3);
    fclose(f);
    return ok;
#else
    return 0;
#endif
}

HT_NOINSTR static double measure_rate(uint64_t min_ns)
{
    uint64_t mono, tsc;
    do {
        mono = ht_now_mono();
        tsc = ht_tsc();
    } while (mono - mono0 < min_ns);
    double r = (double)(tsc - tsc0) / (double)(mono - mono0);
    return r > 0 ? r : 1.0;
}

HT_NOINSTR void ht_clock_init(int want_tsc)
{
    use_tsc = want_tsc && tsc_is_invariant();
    mono0 = ht_now_mono();
    tsc0 = use_tsc ? ht_tsc() : mono0;
    ticks_per_ns = 1.0;
    /* The threshold is compared in ticks on the hot path: a short first
     * measurement (1 ms at start) is close enough for that. */
    if (use_tsc && ht_opt.threshold_ns)
        ticks_per_ns = measure_rate(QUICK_CALIBRATION_NS);
    ht_threshold_ticks = (uint64_t)((double)ht_opt.threshold_ns * ticks_per_ns + 0.5);
}

HT_NOINSTR int ht_clock_is_tsc(void)
{
    return use_tsc;
}

HT_NOINSTR uint64_t ht_now(void)
{
    return use_tsc ? ht_tsc() : ht_now_mono();
}

HT_NOINSTR void ht_clock_calibrate(void)
{
    if (use_tsc)
        ticks_per_ns = measure_rate(MIN_CALIBRATION_NS);
}

HT_NOINSTR double ht_ticks_per_ns(void)
{
    return ticks_per_ns;
}
