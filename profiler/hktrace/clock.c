/* libhktrace's clock: the shared one (common/clock.h), the same choice as
 * libjprof.  Records hold raw ticks; the rate is measured over the whole run
 * when the trace is written. */
#include "hktrace.h"

static struct hk_clock clk = { .ticks_per_ns = 1.0 };
uint64_t ht_threshold_ticks;

#define QUICK_CALIBRATION_NS 1000000ull

HT_NOINSTR void ht_clock_init(int want_tsc)
{
    hk_clock_start(&clk, want_tsc);
    /* The threshold is compared in ticks on the hot path: a short first
     * measurement (1 ms at start) is close enough for that. */
    if (clk.counter && ht_opt.threshold_ns)
        clk.ticks_per_ns = hk_clock_rate(&clk, QUICK_CALIBRATION_NS);
    ht_threshold_ticks = (uint64_t)((double)ht_opt.threshold_ns * clk.ticks_per_ns + 0.5);
}

HT_NOINSTR int ht_clock_is_tsc(void)
{
    return clk.counter;
}

HT_NOINSTR uint64_t ht_now(void)
{
    return hk_clock_now(&clk);
}

HT_NOINSTR void ht_clock_calibrate(void)
{
    clk.ticks_per_ns = hk_clock_rate(&clk, HK_CLOCK_CALIBRATION_NS);
}

HT_NOINSTR double ht_ticks_per_ns(void)
{
    return clk.ticks_per_ns;
}
