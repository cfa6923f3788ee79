/* The clock every hookit library uses: one home for reading the CPU's
 * counter, for deciding whether it can be trusted, and for measuring its
 * rate (as musl keeps a_cas in one header).
 *
 * The counter is read without serialisation: the TSC on x86, the virtual
 * counter cntvct_el0 on arm64 (the one the kernel's vDSO reads).  It is used
 * only when it ticks at one constant rate on every CPU and in every power
 * state; otherwise a clock reads CLOCK_MONOTONIC in nanoseconds.  Ticks stay
 * raw on the hot path; a rate measured against CLOCK_MONOTONIC over the
 * whole run turns them into nanoseconds when a profile is written.
 *
 * The readers are inline: a hook reads the clock twice per call, and a call
 * through the PLT would double its cost.  Everything else is in clock.c. */
#ifndef HOOKIT_COMMON_CLOCK_H
#define HOOKIT_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

/* The counter's name in profile metadata ("clock"): what a reader of the
 * profile needs to know the ticks were not nanoseconds. */
#if defined(__x86_64__) || defined(__i386__)
#define HK_COUNTER_NAME "tsc"
#elif defined(__aarch64__)
#define HK_COUNTER_NAME "cntvct"
#else
#define HK_COUNTER_NAME "monotonic"
#endif

__attribute__((no_instrument_function, always_inline))
static inline uint64_t hk_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The CPU's counter; CLOCK_MONOTONIC where there is none we know. */
__attribute__((no_instrument_function, always_inline))
static inline uint64_t hk_counter(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return hk_mono_ns();
#endif
}

/* 1 when hk_counter() ticks at a constant rate everywhere: x86's invariant
 * TSC (CPUID 0x80000007 EDX bit 8), or a kernel that itself keeps time with
 * the TSC (it checked the TSC is stable: VMs often hide the CPUID bit); on
 * arm64, always (the architecture fixes the system counter's rate), unless
 * cntfrq_el0 reads 0 (firmware left the timer unset).  Reads /sys once at most;
 * errno is kept. */
int hk_counter_usable(void);

/* The counter and CLOCK_MONOTONIC read together: the counter between two
 * CLOCK_MONOTONIC readings, *mono their midpoint, the closest of a few
 * tries.  A thread pre-empted between two plain reads (a whole time slice
 * on a loaded machine, milliseconds) would pair a reading with one taken
 * that much later, and a rate measured from such a pair is off by that
 * over the interval: 3 ms over a 1 s run is 0.3%, a 200 ms wait read as
 * 199.4 ms.  Allocates nothing, errno kept.  Inline: the live reader
 * (the hookit command) has the header's clocks only. */
#define HK_CLOCK_PAIR_GOOD_NS 2000u /* taken at once: a few reads' time, far below a pre-emption */
#define HK_CLOCK_PAIR_TRIES 16
__attribute__((no_instrument_function)) static inline void hk_clock_pair(uint64_t *mono, uint64_t *counter)
{
    uint64_t best = 0;
    for (int i = 0; i < HK_CLOCK_PAIR_TRIES; i++) {
        uint64_t before = hk_mono_ns();
        uint64_t ticks = hk_counter();
        uint64_t after = hk_mono_ns();
        if (i == 0 || after - before < best) {
            best = after - before;
            *mono = before + (after - before) / 2;
            *counter = ticks;
        }
        if (best <= HK_CLOCK_PAIR_GOOD_NS)
            break;
    }
}

/* One clock: the counter or CLOCK_MONOTONIC, and its rate. */
struct hk_clock {
    int counter;                /* 1: ticks are hk_counter(), 0: ns of CLOCK_MONOTONIC */
    uint64_t counter0, mono0;   /* read together at start: the base of the rate */
    double ticks_per_ns;        /* 1.0 for CLOCK_MONOTONIC */
};

/* Start c: the counter when want_counter and it is usable.  The rate is 1.0
 * until the caller measures one (hk_clock_rate): never the rate the
 * hardware states, arm64's cntfrq_el0, which can be wrong (qemu-user says
 * 62.5 MHz and counts with the host's TSC). */
void hk_clock_start(struct hk_clock *c, int want_counter);

/* c's time now, in its ticks. */
__attribute__((no_instrument_function, always_inline))
static inline uint64_t hk_clock_now(const struct hk_clock *c)
{
    return c->counter ? hk_counter() : hk_mono_ns();
}

/* c's rate in ticks per ns, measured over everything since start, waiting
 * until at least min_ns have passed (a short run needs a few ms for a good
 * rate); 1.0 for CLOCK_MONOTONIC.  c is not changed: the caller keeps the
 * rate where its readers look (threads may measure at once). */
double hk_clock_rate(const struct hk_clock *c, uint64_t min_ns);

#define HK_CLOCK_CALIBRATION_NS 2000000ull  /* the rate of a written profile: at least 2 ms */

#endif
