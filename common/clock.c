/* The clock's slow half (clock.h): is the counter usable, and its rate. */
#include "common/clock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#define NOINSTR __attribute__((no_instrument_function))

#if defined(__x86_64__) || defined(__i386__)
/* The kernel chose the TSC as its own clock: it found it stable. */
NOINSTR static int kernel_clock_is_tsc(void)
{
    char name[32] = "";
    int saved = errno;
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
    int ok = 0;
    if (f) {
        ok = fgets(name, sizeof name, f) && !strncmp(name, "tsc", 3);
        fclose(f);
    }
    errno = saved;
    return ok;
}
#endif

#if defined(__aarch64__)
NOINSTR static uint64_t cntfrq(void)
{
    uint64_t hz;
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(hz));
    return hz & 0xffffffffu;    /* the upper half is RES0 */
}
#endif

NOINSTR int hk_counter_usable(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)))
        return 1;
    return kernel_clock_is_tsc();
#elif defined(__aarch64__)
    return cntfrq() != 0;
#else
    return 0;
#endif
}

NOINSTR void hk_clock_start(struct hk_clock *c, int want_counter)
{
    c->counter = want_counter && hk_counter_usable();
    if (c->counter)
        hk_clock_pair(&c->mono0, &c->counter0);
    else
        c->counter0 = c->mono0 = hk_mono_ns();
    c->ticks_per_ns = 1.0;
}

NOINSTR double hk_clock_rate(const struct hk_clock *c, uint64_t min_ns)
{
    if (!c->counter)
        return 1.0;
    uint64_t mono, ticks;
    do {
        hk_clock_pair(&mono, &ticks);
    } while (mono - c->mono0 < min_ns);
    double rate = (double)(ticks - c->counter0) / (double)(mono - c->mono0);
    return rate > 0 ? rate : 1.0;
}
