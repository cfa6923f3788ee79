/* libjprof's clock: the shared one (common/clock.h), the CPU counter when it
 * is usable and CLOCK_MONOTONIC otherwise.  Trees hold raw ticks; they
 * become nanoseconds when a profile is written, with a rate measured over
 * the whole run (at least 2 ms).  The arena's header says which clock the
 * ticks are, for a live reader. */
#include "profiler/jprof/jprof.h"

static struct hk_clock clk = { .ticks_per_ns = 1.0 };

JP_NOINSTR void jp_clock_init(int want_tsc)
{
    hk_clock_start(&clk, want_tsc);
    jp_arena_header()->clock = clk.counter ? 0 : 1;
    jp_arena_header()->ticks_per_ns = clk.ticks_per_ns;
}

JP_NOINSTR int jp_clock_is_tsc(void)
{
    return clk.counter;
}

/* The time now, in ticks: what every part that times something reads
 * outside the hot path (which reads its clock inline, tree.c). */
JP_NOINSTR uint64_t jp_now(void)
{
    return jp_clock_is_tsc() ? hk_counter() : hk_mono_ns();
}

/* Measure the counter's rate over everything since start. */
JP_NOINSTR void jp_clock_calibrate(void)
{
    if (!clk.counter)
        return;
    clk.ticks_per_ns = hk_clock_rate(&clk, HK_CLOCK_CALIBRATION_NS);
    jp_arena_header()->ticks_per_ns = clk.ticks_per_ns;
}

JP_NOINSTR double jp_ticks_per_ns(void)
{
    return clk.ticks_per_ns;
}

JP_NOINSTR uint64_t jp_ticks_to_ns(uint64_t ticks)
{
    return (uint64_t)((double)ticks / clk.ticks_per_ns + 0.5);
}
